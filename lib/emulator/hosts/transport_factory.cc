#include "lib/emulator/hosts/transport_factory.h"

#include "lib/emulator/transport/dcqcn/dcqcn_control.h"
#include "lib/emulator/transport/dcqcn/dcqcn_mlx_control.h"
#include "lib/emulator/transport/hpcc/hpcc_control.h"
#include "lib/emulator/transport/pfabric/pfabric_receiver.h"
#include "lib/emulator/transport/pfabric/pfabric_sender.h"
#include "lib/emulator/transport/rdma/fixed_rate.h"
#include "lib/emulator/transport/rdma/gbn_receiver.h"
#include "lib/emulator/transport/rdma/gbn_sender.h"
#include "lib/emulator/transport/segment_wire.h"
#include "lib/emulator/transport/tcp/tcp_receiver.h"
#include "lib/emulator/transport/tcp/tcp_sender.h"
#include "lib/emulator/transport/timely/timely_control.h"

namespace sluice {

const char* transport_name(TransportKind k) {
  switch (k) {
    case TransportKind::kNone:
      return "none";
    case TransportKind::kTcp:
      return "tcp";
    case TransportKind::kDctcp:
      return "dctcp";
    case TransportKind::kDcqcn:
      return "dcqcn";
    case TransportKind::kHpcc:
      return "hpcc";
    case TransportKind::kTimely:
      return "timely";
    case TransportKind::kBfcNic:
      return "bfc-nic";
    case TransportKind::kPfabric:
      return "pfabric";
  }
  return "?";
}

TransportContext transport_context(const TransportConfig& cfg, uint64_t rate_bps,
                                   uint32_t wire_overhead) {
  TransportContext ctx;
  ctx.link_rate_bps = rate_bps;
  ctx.max_payload = cfg.mss;
  ctx.header_bytes =
      segment_header_bytes(cfg.kind == TransportKind::kHpcc, cfg.kind == TransportKind::kPfabric);
  ctx.wire_overhead = wire_overhead;
  ctx.base_rtt_ns = cfg.base_rtt_ns;
  return ctx;
}

ConfiguredTransport::ConfiguredTransport(const TransportConfig& cfg, const TransportContext& ctx)
    : cfg_(cfg), ctx_(ctx) {
  cfg_.tcp.dctcp = cfg.kind == TransportKind::kDctcp;
}

std::unique_ptr<FlowSender> ConfiguredTransport::sender(const FlowSpec& f) const {
  std::unique_ptr<RateControl> cc;
  switch (cfg_.kind) {
    case TransportKind::kNone:
      return nullptr;
    case TransportKind::kTcp:
    case TransportKind::kDctcp:
      return std::make_unique<TcpSender>(cfg_.tcp, ctx_, f);
    case TransportKind::kPfabric:
      return std::make_unique<PfabricSender>(cfg_.pfabric, ctx_, f);
    case TransportKind::kDcqcn:
      if (cfg_.dcqcn.rules == DcqcnParams::Rules::kNs3Mlx)
        cc = std::make_unique<DcqcnMlxControl>(cfg_.dcqcn, ctx_);
      else
        cc = std::make_unique<DcqcnControl>(cfg_.dcqcn, ctx_);
      break;
    case TransportKind::kHpcc:
      cc = std::make_unique<HpccControl>(cfg_.hpcc, ctx_);
      break;
    case TransportKind::kTimely:
      cc = std::make_unique<TimelyControl>(cfg_.timely, ctx_);
      break;
    case TransportKind::kBfcNic:
      cc = std::make_unique<FixedRate>(
          ctx_, cfg_.bfc_window_bytes == 0 ? FixedRate::kBdpWindow : cfg_.bfc_window_bytes);
      break;
  }
  return std::make_unique<GbnSender>(cfg_.rdma, ctx_, f, std::move(cc));
}

std::unique_ptr<FlowReceiver> ConfiguredTransport::receiver(const FlowSpec& f) const {
  switch (cfg_.kind) {
    case TransportKind::kNone:
      return nullptr;
    case TransportKind::kTcp:
    case TransportKind::kDctcp:
      return std::make_unique<TcpReceiver>(cfg_.tcp, ctx_, f);
    case TransportKind::kPfabric:
      return std::make_unique<PfabricReceiver>(ctx_, f);
    default: {
      GbnParams p = cfg_.rdma;
      // Only DCQCN's notification point sends CNPs.
      if (cfg_.kind != TransportKind::kDcqcn) p.cnp_interval_ns = 0;
      return std::make_unique<GbnReceiver>(p, ctx_, f);
    }
  }
}

}  // namespace sluice
