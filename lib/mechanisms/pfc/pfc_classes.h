#pragma once
// How the eight PFC priorities map to an egress port's N data queues.
//
// sluice classifies data into queues (lib/tm/class_map.h), not by the 802.1Q
// PCP, so a packet's PFC priority is derived from its queue: queue q of N has
// priority q * 8 / N (with 8k queues and DSCP classification this is exactly
// DSCP >> 3, the class selector). A received PFC frame for class c pauses
// every queue of priority c; when N < 8 some classes own no queue and pause
// the queue c * N / 8, the one whose priority is the nearest below c.

#include <array>
#include <cstdint>

#include "lib/mechanisms/pfc/pause_frame.h"

namespace sluice {

using ClassQueueMasks = std::array<uint64_t, kPfcClasses>;  // bit q: data queue q

constexpr uint8_t priority_of_queue(uint32_t queue, uint32_t num_queues) {
  return static_cast<uint8_t>(queue * kPfcClasses / num_queues);
}

// num_queues is 1..64 (as EgressPort allows).
constexpr ClassQueueMasks default_class_queues(uint32_t num_queues) {
  ClassQueueMasks m{};
  for (uint32_t q = 0; q < num_queues; ++q) m[priority_of_queue(q, num_queues)] |= uint64_t{1} << q;
  for (uint32_t c = 0; c < kPfcClasses; ++c) {
    if (m[c] == 0) m[c] = uint64_t{1} << (c * num_queues / kPfcClasses);
  }
  return m;
}

}  // namespace sluice
