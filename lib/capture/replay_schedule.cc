#include "lib/capture/replay_schedule.h"

#include <cmath>
#include <utility>

namespace sluice {

std::vector<uint64_t> capture_offsets(const std::vector<uint64_t>& timestamps_ns) {
  std::vector<uint64_t> out;
  out.reserve(timestamps_ns.size());
  uint64_t latest = timestamps_ns.empty() ? 0 : timestamps_ns.front();
  for (uint64_t ts : timestamps_ns) {
    if (ts > latest) latest = ts;
    out.push_back(latest - timestamps_ns.front());
  }
  return out;
}

uint64_t first_frame_due_ns(uint64_t start_ns, uint64_t first_ts_ns, uint64_t origin_ts_ns,
                            double speed) {
  if (first_ts_ns <= origin_ts_ns) return start_ns;
  const double lead = static_cast<double>(first_ts_ns - origin_ts_ns) / (speed > 0 ? speed : 1.0);
  return start_ns + static_cast<uint64_t>(lead);
}

ReplaySchedule::ReplaySchedule(std::vector<uint64_t> offsets_ns, PcapReplayMode mode, bool loop,
                               double speed)
    : offsets_ns_(std::move(offsets_ns)),
      frames_(offsets_ns_.size()),
      mode_(mode),
      loop_(loop),
      speed_(speed > 0 ? speed : 1.0) {
  if (frames_ > 1) {
    const uint64_t duration = offsets_ns_.back();
    const uint64_t gaps = frames_ - 1;
    pass_length_ns_ = duration + (duration + gaps / 2) / gaps;  // + average gap, rounded
  }
}

void ReplaySchedule::start(uint64_t start_ns) {
  started_ = true;
  start_ns_ = start_ns;
  pass_ = 0;
  next_ = 0;
  due_ns_ = compute_due();
}

void ReplaySchedule::advance() {
  if (done()) return;
  if (++next_ == frames_ && loop_) {
    next_ = 0;
    ++pass_;
  }
  if (!done()) due_ns_ = compute_due();
}

uint64_t ReplaySchedule::compute_due() const {
  if (mode_ == PcapReplayMode::kFast || frames_ == 0) return start_ns_;
  const uint64_t capture_ns = pass_ * pass_length_ns_ + offsets_ns_[next_];
  if (speed_ == 1.0) return start_ns_ + capture_ns;
  // long double keeps integer nanoseconds exact far beyond any capture length.
  return start_ns_ + static_cast<uint64_t>(std::floor(static_cast<long double>(capture_ns) /
                                                      static_cast<long double>(speed_)));
}

}  // namespace sluice
