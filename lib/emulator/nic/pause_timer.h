#pragma once
// One PAUSE/PFC pause as the receiving NIC keeps it: a frame asking for
// `length` ns (0: resume) received at `at` opens a pause [at, at + length); a
// frame received while it runs replaces its end (the standard's timer
// restart: it may extend or shorten it, and 0 ends it at once). Frames must
// be applied in time order. Time is an argument (ns); no allocation.

#include <cstdint>

namespace sluice {

class PauseTimer {
 public:
  void apply(uint64_t at_ns, uint64_t length_ns);

  bool paused_at(uint64_t now_ns) const { return open_ && start_ns_ <= now_ns && now_ns < end_ns_; }
  // When the current (or last) pause ends or ended; 0 before any pause.
  uint64_t end_ns() const { return end_ns_; }
  // Total time paused up to now_ns (not before the last apply): closed
  // intervals plus the running one. Inline: a replay port sums its timers on
  // every poll.
  uint64_t paused_ns(uint64_t now_ns) const {
    if (!open_ || now_ns <= start_ns_) return closed_ns_;
    return closed_ns_ + (now_ns < end_ns_ ? now_ns : end_ns_) - start_ns_;
  }

 private:
  bool open_ = false;
  uint64_t start_ns_ = 0;
  uint64_t end_ns_ = 0;
  uint64_t closed_ns_ = 0;
};

}  // namespace sluice
