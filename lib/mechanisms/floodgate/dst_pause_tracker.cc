#include "lib/mechanisms/floodgate/dst_pause_tracker.h"

#include <algorithm>

namespace sluice {

DstPauseTracker::DstPauseTracker(uint32_t max_pairs, uint64_t pause_bytes,
                                 uint64_t hysteresis_bytes)
    : pause_(pause_bytes),
      resume_(pause_bytes > hysteresis_bytes ? pause_bytes - hysteresis_bytes : 0),
      pairs_(max_pairs) {}

DstPauseSignal DstPauseTracker::on_enter(uint32_t i, uint32_t dst, uint32_t bytes) {
  Pair* p = pairs_.find(i, dst, true);
  if (p == nullptr) {
    untracked.add();
    return DstPauseSignal::kNone;
  }
  p->bytes += bytes;
  if (p->paused || p->bytes <= pause_) return DstPauseSignal::kNone;
  p->paused = true;
  paused_.add();
  return DstPauseSignal::kPause;
}

DstPauseSignal DstPauseTracker::on_leave(uint32_t i, uint32_t dst, uint32_t bytes) {
  Pair* p = pairs_.find(i, dst, false);
  if (p == nullptr) return DstPauseSignal::kNone;  // it entered untracked
  p->bytes -= std::min<uint64_t>(bytes, p->bytes);
  if (!p->paused || (p->bytes > resume_ && p->bytes != 0)) return DstPauseSignal::kNone;
  p->paused = false;
  paused_.sub();
  return DstPauseSignal::kResume;
}

uint64_t DstPauseTracker::bytes(uint32_t i, uint32_t dst) const {
  const Pair* p = pairs_.find(i, dst);
  return p ? p->bytes : 0;
}

}  // namespace sluice
