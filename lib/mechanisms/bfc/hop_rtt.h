#pragma once
// A BFC switch's hop RTT (HRTT), and what it sizes besides Th: the sticky threshold
// (default 2 x HRTT, paper 3.3.2 "Sticky queue assignment") and the bitmap
// refresh interval (default 10 x HRTT). Configured values (0 = default) are
// used as given. Products saturate at UINT64_MAX (never) instead of wrapping
// to a short interval. docs/mechanisms/bfc.md ("Hop RTT").

#include <algorithm>
#include <cstdint>
#include <span>

#include "lib/common/saturating.h"

namespace sluice {

// HRTT: the largest hop_rtt among the ports whose peer can be paused
// (`switch_facing`: switch upstreams and BFC NICs). The paper (3.3.2) takes
// the max over the ingresses because a queue can hold packets from any; here
// other host-facing ingresses count no pauses, so only pausable peers' RTT
// says how late a pause acts. A switch without such a port pauses nothing:
// the largest of all its ports, so that sticky and the Th gauge still have a
// scale.
constexpr uint64_t upstream_hop_rtt_ns(std::span<const uint64_t> port_hop_rtt_ns,
                                       std::span<const bool> switch_facing) {
  uint64_t facing = 0, any = 0;
  bool has_facing = false;
  for (size_t p = 0; p < port_hop_rtt_ns.size(); ++p) {
    any = std::max(any, port_hop_rtt_ns[p]);
    if (p < switch_facing.size() && switch_facing[p]) {
      has_facing = true;
      facing = std::max(facing, port_hop_rtt_ns[p]);
    }
  }
  return has_facing ? facing : any;
}

inline constexpr uint64_t kStickyHopRttMultiple = 2;
inline constexpr uint64_t kBitmapHopRttMultiple = 10;

constexpr uint64_t bfc_sticky_ns(uint64_t configured_ns, uint64_t hop_rtt_ns) {
  return configured_ns != 0 ? configured_ns : sat_mul(kStickyHopRttMultiple, hop_rtt_ns);
}

// The time Th stands for at line rate (Th = th x rate / N_active): the hop
// RTT (the paper's rule, 3.3.2 "Pause threshold") unless configured (bfc.th,
// for sweeps like the paper's Fig. 7b). Only Th changes: sticky and the bitmap
// period stay multiples of the hop RTT, which is how late a pause really acts.
constexpr uint64_t bfc_th_time_ns(uint64_t configured_ns, uint64_t hop_rtt_ns) {
  return configured_ns != 0 ? configured_ns : hop_rtt_ns;
}

constexpr uint64_t bfc_bitmap_interval_ns(uint64_t configured_ns, uint64_t hop_rtt_ns) {
  return configured_ns != 0 ? configured_ns : sat_mul(kBitmapHopRttMultiple, hop_rtt_ns);
}

}  // namespace sluice
