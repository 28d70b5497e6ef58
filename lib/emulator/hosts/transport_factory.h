#pragma once
// Builds each flow's sender and receiver for the transport a configuration
// names (lib/emulator/transport/transport_config.h): TCP NewReno or DCTCP
// (lib/emulator/transport/tcp/), a RoCE NIC's go-back-N (lib/emulator/transport/rdma/)
// with DCQCN, HPCC, TIMELY, or the BFC paper's fixed line rate as its
// congestion control, or pFabric's hosts (lib/emulator/transport/pfabric/).

#include "lib/emulator/hosts/transport_host.h"
#include "lib/emulator/transport/transport_config.h"

namespace sluice {

class ConfiguredTransport : public TransportMaker {
 public:
  ConfiguredTransport(const TransportConfig& cfg, const TransportContext& ctx);
  std::unique_ptr<FlowSender> sender(const FlowSpec& f) const override;
  std::unique_ptr<FlowReceiver> receiver(const FlowSpec& f) const override;
  bool wants_int() const override { return cfg_.kind == TransportKind::kHpcc; }

 private:
  TransportConfig cfg_;
  TransportContext ctx_;
};

// The context of a host on a link of rate_bps: full segments of cfg.mss,
// headers as segment_wire.h writes them (INT room for HPCC, the rank for
// pFabric).
TransportContext transport_context(const TransportConfig& cfg, uint64_t rate_bps,
                                   uint32_t wire_overhead);

}  // namespace sluice
