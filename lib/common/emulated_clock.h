#pragma once
// The data path's clock. In real time it is the machine's clock. In virtual
// time it may advance by at most `max_step_ns` between two readings: when
// the machine stalls the worker (descheduled, hypervisor steal) or one loop
// iteration outlasts the step, the emulated fabric is frozen for the excess
// instead of seeing its frames leave late. Links, shapers, timers and the
// replay all read this clock, so a stall costs wall time, not fidelity. This
// is only sound when nothing outside the process keeps time with the fabric
// (every port is a capture-file port or an internal link). The time frozen
// is counted: wall time over emulated time is the run's dilation.

#include <cstdint>

namespace sluice {

class EmulatedClock {
 public:
  // max_step_ns == 0: real time (never frozen).
  explicit EmulatedClock(uint64_t max_step_ns = 0) : max_step_ns_(max_step_ns) {}

  // Both clocks read `real_ns` at the start.
  void start(uint64_t real_ns) {
    last_real_ns_ = real_ns;
    frozen_ns_ = 0;
  }

  // The emulated instant for the machine's `real_ns` (which never goes back).
  uint64_t advance(uint64_t real_ns) {
    const uint64_t step = real_ns > last_real_ns_ ? real_ns - last_real_ns_ : 0;
    if (max_step_ns_ != 0 && step > max_step_ns_) frozen_ns_ += step - max_step_ns_;
    if (real_ns > last_real_ns_) last_real_ns_ = real_ns;
    return last_real_ns_ - frozen_ns_;
  }

  uint64_t frozen_ns() const { return frozen_ns_; }
  bool is_virtual() const { return max_step_ns_ != 0; }

 private:
  uint64_t max_step_ns_;
  uint64_t last_real_ns_ = 0;
  uint64_t frozen_ns_ = 0;
};

}  // namespace sluice
