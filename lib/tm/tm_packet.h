#pragma once
// The descriptor the traffic manager queues. The frame itself stays where it
// is (an rte_mbuf in switch/); lib/ only sees an opaque handle and a length.

#include <cstdint>

#include "lib/common/drop_reason.h"

namespace sluice {

// TmPacket::queue of a frame that went through the control queue.
constexpr uint16_t kControlQueue = 0xFFFF;

struct TmPacket {
  void* handle = nullptr;  // opaque to lib/ (an rte_mbuf* in switch/)
  uint32_t bytes = 0;      // frame length
  uint16_t queue = 0;      // set by the TM on enqueue (data queue index; kControlQueue for control)
  uint16_t aux = 0;        // caller metadata carried unchanged (mechanisms use it)
  uint64_t enqueue_ns = 0;  // set by the TM on enqueue
};

enum class EnqueueVerdict : uint8_t { kEnqueued, kEnqueuedMarked, kDropped };

struct EnqueueResult {
  EnqueueVerdict verdict;
  DropReason reason;  // valid when verdict == kDropped (kCount otherwise)
};

}  // namespace sluice
