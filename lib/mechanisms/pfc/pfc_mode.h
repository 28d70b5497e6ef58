#pragma once
// Which flow control a port runs, and the index used for port-wide (802.3x
// PAUSE) state and counters next to the eight PFC priorities.

#include <cstdint>

#include "lib/mechanisms/pfc/pause_frame.h"

namespace sluice {

// 802.3 Annex 31D: when PFC is enabled on a link, PAUSE is disabled, so a
// port runs one or the other (or neither).
enum class PfcMode : uint8_t { kOff, kPfc, kPause };

// Counters and pause state are arrays of kPfcSlots: priorities 0..7, then
// kAllPriorities for 802.3x PAUSE (metric label priority="all").
inline constexpr uint32_t kAllPriorities = kPfcClasses;
inline constexpr uint32_t kPfcSlots = kPfcClasses + 1;

}  // namespace sluice
