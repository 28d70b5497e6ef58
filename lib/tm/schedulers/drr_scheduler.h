#pragma once
// Picks which data queue sends next: deficit round robin (Shreedhar &
// Varghese, "Efficient Fair Queuing Using Deficit Round Robin") or strict
// priority (higher queue index first); either with the last queue first
// whenever it may send (a queue for replies).
//
// The scheduler keeps two bitmaps over at most 64 queues: backlogged (the
// owner says so on enqueue / dequeue) and paused. Eligible = backlogged and
// not paused; finding the next eligible queue is a count-trailing-zeros, so
// the cost per packet does not grow with the number of queues.
//
// DRR: when the round reaches a queue its deficit grows by one quantum and it
// sends while the head packet fits in the deficit. A queue that empties loses
// its deficit (as in the paper). A paused queue is skipped and not credited;
// it keeps the deficit it had (at most quantum + one packet), so a pause does
// not cost it the rest of its turn. With a quantum at least the largest frame,
// every visit sends at least one packet.

#include <bit>
#include <cstdint>

#include "lib/config/config.h"

namespace sluice {

class DrrScheduler {
 public:
  static constexpr unsigned kMaxQueues = 64;
  static constexpr int kNone = -1;

  DrrScheduler(uint32_t num_queues, uint32_t quantum_bytes, SchedulerKind kind,
               bool priority_last = false)
      : num_queues_(num_queues),
        quantum_(quantum_bytes == 0 ? 1 : quantum_bytes),
        strict_(kind == SchedulerKind::kStrictPriority),
        first_(priority_last ? bit(num_queues - 1) : 0) {}

  uint32_t num_queues() const { return num_queues_; }
  uint32_t quantum() const { return quantum_; }
  bool strict_priority() const { return strict_; }

  void set_backlogged(unsigned q) { backlogged_ |= bit(q); }
  // The queue became empty: it leaves the round and forfeits its deficit.
  void set_empty(unsigned q) {
    backlogged_ &= ~bit(q);
    deficit_[q] = 0;
  }
  void set_paused(unsigned q) { paused_ |= bit(q); }
  void clear_paused(unsigned q) { paused_ &= ~bit(q); }
  uint64_t paused_mask() const { return paused_; }
  uint64_t backlogged_mask() const { return backlogged_; }
  uint64_t eligible_mask() const { return backlogged_ & ~paused_; }
  int64_t deficit(unsigned q) const { return deficit_[q]; }
  // Queue q sends while it has packets, no deficit counted: under strict
  // priority, or the priority queue.
  bool unlimited(unsigned q) const { return (unlimited_mask() >> q) & 1; }
  uint64_t unlimited_mask() const { return strict_ ? ~uint64_t{0} : first_; }

  // The queue to send from next, or kNone. head_bytes(q) gives the length of
  // queue q's head packet. The caller must then call sent(q, bytes).
  template <class HeadBytes>
  int pick(HeadBytes&& head_bytes) {
    uint64_t elig = backlogged_ & ~paused_;
    if (elig == 0) return kNone;
    if (strict_) return 63 - std::countl_zero(elig);
    // The priority queue takes no part in the round (nor its deficit).
    if (first_ != 0) [[unlikely]] {
      if (elig & first_) return std::countr_zero(first_);
      elig &= ~first_;
      if (elig == 0) return kNone;
    }
    unsigned q = cur_;
    if (((elig >> q) & 1) && deficit_[q] >= static_cast<int64_t>(head_bytes(q))) return q;
    for (;;) {  // next eligible queue in round order; terminates: deficits grow
      q = next_after(elig, q);
      cur_ = q;
      deficit_[q] += quantum_;
      if (deficit_[q] >= static_cast<int64_t>(head_bytes(q))) return q;
    }
  }

  // A packet went through queue q, empty before and after, with no other
  // queue backlogged: what pick() then set_empty() leave (the round at q).
  void passed(unsigned q) {
    if (!strict_ && !(first_ & bit(q))) cur_ = q;
  }

  void sent(unsigned q, uint32_t bytes) {
    if (!strict_ && !(first_ & bit(q))) deficit_[q] -= bytes;
  }

  // Forget all state (used after a drain).
  void reset() {
    backlogged_ = 0;
    cur_ = kMaxQueues - 1;
    for (auto& d : deficit_) d = 0;
  }

 private:
  static uint64_t bit(unsigned q) { return uint64_t{1} << q; }
  // Lowest set bit above q, wrapping around to the lowest set bit.
  static unsigned next_after(uint64_t mask, unsigned q) {
    uint64_t above = mask & ~((uint64_t{2} << q) - 1);  // 2<<63 == 0: nothing above 63
    return std::countr_zero(above != 0 ? above : mask);
  }

  uint32_t num_queues_;
  uint32_t quantum_;
  bool strict_;
  uint64_t first_;  // the priority queue's bit, or 0
  uint64_t backlogged_ = 0;
  uint64_t paused_ = 0;
  unsigned cur_ = kMaxQueues - 1;  // so the first round starts at queue 0
  int64_t deficit_[kMaxQueues] = {};
};

}  // namespace sluice
