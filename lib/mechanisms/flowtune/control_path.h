#pragma once
// One direction of Flowtune's control path in exact fabric time (edges to
// the allocator, or back): messages sent at `now` arrive `delay` later, in
// the order they were sent, none lost unless more are in flight than the
// path holds (the caller counts that). The paper's control messages ride
// TCP connections (§5.3), so they arrive in order; a fixed delay stands for
// their path through the network (docs/mechanisms/flowtune.md, "The
// allocator in the fabric").
//
// A fixed ring: with one delay, arrival times never decrease along it. No
// allocation after construction; time is an argument.

#include <algorithm>
#include <cstdint>
#include <vector>

namespace sluice::flowtune {

template <class Message>
class ControlPath {
 public:
  static constexpr uint64_t kNever = UINT64_MAX;

  ControlPath(uint64_t delay_ns, uint32_t capacity)
      : delay_(delay_ns), ring_(std::max<uint32_t>(capacity, 1)) {}

  // False (nothing sent) when `capacity` messages are in flight.
  bool send(const Message& m, uint64_t now_ns) {
    if (count_ == ring_.size()) return false;
    ring_[(head_ + count_) % ring_.size()] = Entry{now_ns + delay_, m};
    ++count_;
    return true;
  }

  // When the next message arrives (kNever: none in flight).
  uint64_t next_arrival_ns() const { return count_ == 0 ? kNever : ring_[head_].due_ns; }

  // Gives every message that has arrived by now to take(const Message&), in
  // order; returns how many.
  template <class Take>
  uint32_t receive(uint64_t now_ns, Take&& take) {
    uint32_t n = 0;
    while (count_ != 0 && ring_[head_].due_ns <= now_ns) {
      const Message m = ring_[head_].msg;
      head_ = (head_ + 1) % ring_.size();
      --count_;
      ++n;
      take(m);
    }
    return n;
  }

  uint32_t in_flight() const { return count_; }
  uint64_t delay_ns() const { return delay_; }

 private:
  struct Entry {
    uint64_t due_ns = 0;
    Message msg{};
  };
  uint64_t delay_;
  std::vector<Entry> ring_;
  uint32_t head_ = 0;
  uint32_t count_ = 0;
};

}  // namespace sluice::flowtune
