#pragma once
// The BFC paper's host NIC ("Backpressure Flow Control", Goyal et al., NSDI
// 2022): no end-to-end congestion control. A flow starts at line rate and
// never changes its rate (section 5, "in a full deployment, BFC would not
// require end-to-end congestion control"; section 6.1's senders have none).
// Where the NIC does not react to BFC's backpressure ("BFC - NIC",
// appendix E.1) and for the Ideal-FQ baseline (section 6.2.1), the NIC caps
// each flow's data in flight at one end-to-end bandwidth-delay product; that
// cap is the default here. With no window this is also sluice's "none"
// congestion control (line rate, nothing else).

#include <algorithm>
#include <cstdint>

#include "lib/emulator/transport/flow_transport.h"
#include "lib/emulator/transport/rdma/rate_control.h"

namespace sluice {

class FixedRate : public RateControl {
 public:
  // window_bytes: kBdpWindow = one BDP (the context's link rate x base RTT,
  // in payload bytes, rounded down); kNoWindow = no cap; anything else that
  // many bytes.
  static constexpr uint64_t kBdpWindow = 0;
  static constexpr uint64_t kNoWindow = kTransportNever;

  // rate_bps 0: the context's link rate.
  explicit FixedRate(const TransportContext& ctx, uint64_t window_bytes = kBdpWindow,
                     uint64_t rate_bps = 0)
      : rate_bps_(std::max<uint64_t>(rate_bps != 0 ? rate_bps : ctx.link_rate_bps, 1)),
        window_bytes_(window_bytes == kBdpWindow ? bdp_bytes(ctx) : window_bytes) {}

  // link rate x base RTT / 8, in bytes.
  static uint64_t bdp_bytes(const TransportContext& ctx) {
    const unsigned __int128 bits_ns =
        static_cast<unsigned __int128>(ctx.link_rate_bps) * ctx.base_rtt_ns;
    const unsigned __int128 bytes = bits_ns / 8'000'000'000ull;
    return bytes >= kTransportNever ? kTransportNever - 1 : static_cast<uint64_t>(bytes);
  }

  uint64_t rate_bps() const override { return rate_bps_; }
  uint64_t window_bytes() const override { return window_bytes_; }

 private:
  uint64_t rate_bps_;
  uint64_t window_bytes_;
};

}  // namespace sluice
