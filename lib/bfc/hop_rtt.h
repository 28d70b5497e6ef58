#pragma once
// What a BFC switch's hop RTT (HRTT) sizes besides Th: the sticky threshold
// (default 2 x HRTT, paper 3.3.2 "Sticky queue assignment") and the bitmap
// refresh interval (default 10 x HRTT). Configured values (0 = default) are
// used as given. Products saturate at UINT64_MAX (never) instead of wrapping
// to a short interval. docs/mechanisms/bfc.md ("Hop RTT").

#include <cstdint>

#include "lib/common/saturating.h"

namespace sluice {

inline constexpr uint64_t kStickyHopRttMultiple = 2;
inline constexpr uint64_t kBitmapHopRttMultiple = 10;

constexpr uint64_t bfc_sticky_ns(uint64_t configured_ns, uint64_t hop_rtt_ns) {
  return configured_ns != 0 ? configured_ns : sat_mul(kStickyHopRttMultiple, hop_rtt_ns);
}

constexpr uint64_t bfc_bitmap_interval_ns(uint64_t configured_ns, uint64_t hop_rtt_ns) {
  return configured_ns != 0 ? configured_ns : sat_mul(kBitmapHopRttMultiple, hop_rtt_ns);
}

}  // namespace sluice
