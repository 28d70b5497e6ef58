#include "lib/floodgate/dst_pause_tracker.h"

#include <algorithm>
#include <bit>

namespace sluice {

DstPauseTracker::DstPauseTracker(uint32_t max_pairs, uint64_t pause_bytes,
                                 uint64_t hysteresis_bytes)
    : pause_(pause_bytes),
      resume_(pause_bytes > hysteresis_bytes ? pause_bytes - hysteresis_bytes : 0),
      max_(std::max<uint32_t>(max_pairs, 1)),
      mask_(std::bit_ceil(2 * max_) - 1),
      pairs_(mask_ + 1) {}

DstPauseTracker::Pair* DstPauseTracker::find(uint64_t key, bool add) {
  const uint64_t h = key * 0x9E3779B97F4A7C15ull;
  for (uint32_t s = static_cast<uint32_t>(h >> 40) & mask_;; s = (s + 1) & mask_) {
    Pair& p = pairs_[s];
    if (p.key == key) return &p;
    if (p.key != 0) continue;
    if (!add || count_ == max_) return nullptr;
    ++count_;
    p.key = key;
    return &p;
  }
}

DstPauseSignal DstPauseTracker::on_enter(uint32_t i, uint32_t dst, uint32_t bytes) {
  Pair* p = find((uint64_t{i} + 1) << 32 | dst, true);
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
  Pair* p = find((uint64_t{i} + 1) << 32 | dst, false);
  if (p == nullptr) return DstPauseSignal::kNone;  // it entered untracked
  p->bytes -= std::min<uint64_t>(bytes, p->bytes);
  if (!p->paused || (p->bytes > resume_ && p->bytes != 0)) return DstPauseSignal::kNone;
  p->paused = false;
  paused_.sub();
  return DstPauseSignal::kResume;
}

uint64_t DstPauseTracker::bytes(uint32_t i, uint32_t dst) const {
  const Pair* p = const_cast<DstPauseTracker*>(this)->find((uint64_t{i} + 1) << 32 | dst, false);
  return p ? p->bytes : 0;
}

}  // namespace sluice
