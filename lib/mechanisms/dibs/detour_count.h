#pragma once
// How many detours a packet has taken, and the max_detours rule (SPEC 4.3;
// "DIBS: Just-in-time Congestion Mitigation for Data Centers", section
// 5.5.3, where the IP TTL is the only bound and lowering it is the knob).
//
// The count travels in the detour byte of the 0x88B6 data shim, so it is
// known only between sluice peers; a packet from a host starts at 0. It
// saturates at 255: a packet detoured that often keeps saying 255.
// max_detours 0 means no cap (TTL alone bounds a loop, as in the paper);
// otherwise a packet whose count has reached max_detours is not detoured
// again and is dropped under its own reason (detour_max_detours).
// docs/mechanisms/dibs.md ("Rules").

#include <cstdint>

namespace sluice {

inline constexpr uint8_t kMaxDetourCount = 255;

// The count a packet carries after one more detour.
constexpr uint8_t next_detour_count(uint8_t detours) {
  return detours == kMaxDetourCount ? kMaxDetourCount : static_cast<uint8_t>(detours + 1);
}

// Whether a packet that has taken `detours` may be detoured once more.
constexpr bool may_detour(uint8_t detours, uint32_t max_detours) {
  return max_detours == 0 || detours < max_detours;
}

}  // namespace sluice
