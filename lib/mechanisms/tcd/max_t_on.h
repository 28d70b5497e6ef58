#pragma once
// Default max_T_on: the longest ON period a queue built only by downstream
// pauses can have, so that a longer one means the port itself is congested
// (SPEC 4.4; the derivation is in docs/mechanisms/tcd.md, "max_T_on").
//
// One ON-OFF cycle: the downstream asks to resume when its queue for us has
// drained to the resume level, the resume reaches us, we send at C, and the
// downstream pauses us again when its queue is back at the pause level; the
// ON period ends when that pause arrives. With the downstream draining at r,
//   T_on = (pause level - resume level + 2 C d) / (C - r),
// d the one-way delay; the factor 2 in both forms below is r = C / 2.
//  - PFC / PAUSE: levels XOFF and XON, so
//      max_T_on = 2 (XOFF - XON + 2 C d) / C.
//  - BFC: a queue pauses its upstream above Th and resumes once the last
//    packet counted above Th has left, i.e. about empty, and 2 d is the hop
//    RTT, so
//      max_T_on = 2 (Th + C hop_rtt) / C.
// A rate of 0 (an unshaped port, as fast as its device) drops the byte term.
// Results in ns, byte times rounded up, saturating at UINT64_MAX.

#include <cstdint>

#include "lib/common/saturating.h"

namespace sluice {

// ns to send `bytes` at rate_bps, rounded up; 0 for rate 0.
constexpr uint64_t tcd_byte_time_ns(uint64_t bytes, uint64_t rate_bps) {
  if (rate_bps == 0) return 0;
  const unsigned __int128 bits_ns = static_cast<unsigned __int128>(bytes) * 8'000'000'000ull;
  const unsigned __int128 ns = (bits_ns + rate_bps - 1) / rate_bps;
  return ns > UINT64_MAX ? UINT64_MAX : static_cast<uint64_t>(ns);
}

// 2 (XOFF - XON + 2 C d) / C = 2 (XOFF - XON) / C + 4 d.
constexpr uint64_t tcd_pfc_max_t_on_ns(uint64_t xoff_minus_xon_bytes, uint64_t rate_bps,
                                       uint64_t link_delay_ns) {
  return sat_add(sat_mul(2, tcd_byte_time_ns(xoff_minus_xon_bytes, rate_bps)),
                 sat_mul(4, link_delay_ns));
}

// 2 (Th + C hop_rtt) / C = 2 Th / C + 2 hop_rtt.
constexpr uint64_t tcd_bfc_max_t_on_ns(uint64_t th_bytes, uint64_t rate_bps, uint64_t hop_rtt_ns) {
  return sat_add(sat_mul(2, tcd_byte_time_ns(th_bytes, rate_bps)), sat_mul(2, hop_rtt_ns));
}

}  // namespace sluice
