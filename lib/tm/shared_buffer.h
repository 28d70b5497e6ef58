#pragma once
// Shared packet buffer with dynamic queue thresholds (Choudhury & Hahne,
// "Dynamic Queue Length Thresholds for Shared-Memory Packet Switches").
//
// A queue may grow while queue + packet <= alpha * (capacity - used). With N
// equally loaded backlogged queues each settles at alpha / (1 + N * alpha) of
// the capacity, leaving 1 / (1 + N * alpha) free for queues that become active.
//
// One SharedBuffer serves the egress ports that one lcore owns within one
// switch; it is never shared across lcores, so `used` has a single writer.

#include <cstdint>

#include "lib/common/drop_reason.h"
#include "lib/common/relaxed_counter.h"

namespace sluice {

class SharedBuffer {
 public:
  // alpha is kept as a fixed-point multiplier with kAlphaFracBits bits.
  static constexpr unsigned kAlphaFracBits = 20;

  // Throws std::invalid_argument unless alpha > 0 and finite.
  SharedBuffer(uint64_t capacity_bytes, double alpha);
  SharedBuffer(const SharedBuffer&) = delete;
  SharedBuffer& operator=(const SharedBuffer&) = delete;

  // Whether a queue holding queue_bytes may take a packet of `bytes`. On
  // refusal *why is kBufferFull (the buffer itself has no room) or
  // kQueueThreshold (the queue is past its dynamic threshold).
  bool admits(uint64_t queue_bytes, uint32_t bytes, DropReason* why) const {
    uint64_t used = used_.get();
    if (used + bytes > capacity_) {
      *why = DropReason::kBufferFull;
      return false;
    }
    if (queue_bytes + bytes > threshold_for(used)) {
      *why = DropReason::kQueueThreshold;
      return false;
    }
    return true;
  }

  // The largest packet admits(queue_bytes, ...) takes now: admits() is
  // true exactly for bytes <= admit_limit(queue_bytes) (0: for none).
  uint64_t admit_limit(uint64_t queue_bytes) const {
    const uint64_t used = used_.get();
    if (used >= capacity_) return 0;
    const uint64_t room = capacity_ - used;
    const uint64_t threshold = alpha_times(room);
    if (queue_bytes >= threshold) return 0;
    return room < threshold - queue_bytes ? room : threshold - queue_bytes;
  }

  // admits() and charge() in one, without the reason (the enqueue fast
  // path). False charges nothing.
  bool try_charge(uint64_t queue_bytes, uint32_t bytes) {
    const uint64_t used = used_.get();
    if (used + bytes > capacity_) return false;
    if (queue_bytes + bytes > alpha_times(capacity_ - used)) return false;
    used_.set(used + bytes);
    return true;
  }

  void charge(uint64_t bytes) { used_.add(bytes); }
  // Bytes of any number of packets (the dequeue loop releases once a burst).
  void release(uint64_t bytes) { used_.sub(bytes); }

  uint64_t used() const { return used_.get(); }
  uint64_t capacity() const { return capacity_; }
  double alpha() const { return static_cast<double>(alpha_fp_) / (1ull << kAlphaFracBits); }
  // The current dynamic threshold: alpha * (capacity - used), in bytes.
  uint64_t threshold() const { return threshold_for(used_.get()); }

 private:
  uint64_t threshold_for(uint64_t used) const {
    return alpha_times(used < capacity_ ? capacity_ - used : 0);
  }
  uint64_t alpha_times(uint64_t free) const {
    return static_cast<uint64_t>((static_cast<unsigned __int128>(free) * alpha_fp_) >>
                                 kAlphaFracBits);
  }

  uint64_t capacity_;
  uint64_t alpha_fp_;
  RelaxedCounter used_;
};

}  // namespace sluice
