#pragma once
// When each switch-facing ingress port re-sends its full paused set as a
// BFC_BITMAP: every interval_ns (default 10 x hop RTT), so a lost BFC_PAUSE or
// BFC_RESUME heals within one interval (lib/mechanisms/bfc/hop_rtt.h). The body is
// PauseCounters::paused(port). docs/mechanisms/bfc.md ("Bitmap refresh").
// Single writer; no allocation after construction.

#include <cstdint>
#include <memory>
#include <span>

#include "lib/common/saturating.h"

namespace sluice {

class BitmapSchedule {
 public:
  // One entry per port: is it switch-facing (only those get bitmaps). The
  // first bitmap of every port is due at first_ns + interval_ns. Throws
  // std::invalid_argument for interval_ns 0.
  BitmapSchedule(std::span<const bool> switch_facing, uint64_t interval_ns, uint64_t first_ns);

  // Calls fn(port) for every switch-facing port whose bitmap is due at
  // now_ns, and schedules its next one interval_ns after now_ns. Due times
  // saturate: one past 2^64 is never, not at once.
  template <class F>
  void poll(uint64_t now_ns, F&& fn) {
    if (now_ns < next_due_ns_) return;
    uint64_t next = UINT64_MAX;
    for (uint32_t p = 0; p < num_ports_; ++p) {
      if (due_ns_[p] == UINT64_MAX) continue;  // host-facing
      if (now_ns >= due_ns_[p]) {
        fn(static_cast<uint16_t>(p));
        due_ns_[p] = sat_add(now_ns, interval_ns_);
      }
      if (due_ns_[p] < next) next = due_ns_[p];
    }
    next_due_ns_ = next;
  }

  uint64_t next_due_ns() const { return next_due_ns_; }
  uint64_t interval_ns() const { return interval_ns_; }

 private:
  uint32_t num_ports_;
  uint64_t interval_ns_;
  uint64_t next_due_ns_ = UINT64_MAX;
  std::unique_ptr<uint64_t[]> due_ns_;  // UINT64_MAX: never (host-facing)
};

}  // namespace sluice
