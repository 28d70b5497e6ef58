#include "lib/mechanisms/tcd/tcd_detector.h"

namespace sluice {

TcdDetector::TcdDetector(const TcdParams& params, uint64_t now_ns)
    : params_(params), since_ns_(now_ns), latest_ns_(now_ns) {}

void TcdDetector::on_pause(uint64_t now_ns) {
  now_ns = observe(now_ns);
  if (off_) return;
  advance(now_ns);
  if (ever_off_) stats_.on_periods.record(now_ns - on_since_ns_);
  stats_.pauses.add(1);
  if (state_ != TcdState::kUndetermined) {
    move_to(TcdState::kUndetermined, now_ns);
  } else {
    charge(now_ns);
  }
  off_ = true;
  ever_off_ = true;
  sample_valid_ = false;  // "falling" compares samples of one ON period
}

void TcdDetector::on_resume(uint64_t now_ns) {
  now_ns = observe(now_ns);
  if (!off_) return;
  charge(now_ns);
  off_ = false;
  on_since_ns_ = now_ns;
}

// The first sample of an ON period is the reference; a sample at least
// falling_interval later below it means falling, and becomes the next
// reference either way.
bool TcdDetector::falling(uint64_t now_ns, uint64_t queue_bytes) {
  if (!sample_valid_) {
    sample_valid_ = true;
    sample_bytes_ = queue_bytes;
    sample_ns_ = now_ns;
    return false;
  }
  if (now_ns - sample_ns_ < params_.falling_interval_ns) return false;
  const bool fell = queue_bytes < sample_bytes_;
  sample_bytes_ = queue_bytes;
  sample_ns_ = now_ns;
  return fell;
}

uint64_t TcdDetector::time_in_ns(TcdState s, uint64_t now_ns) const {
  if (now_ns < latest_ns_) now_ns = latest_ns_;
  uint64_t total = stats_.time_ns[index_of(s)].get();
  if (undetermined_expired(now_ns)) {
    // What advance() will charge: undetermined up to the expiry, then the
    // state the last queue seen gives.
    const uint64_t end = undetermined_end_ns() > since_ns_ ? undetermined_end_ns() : since_ns_;
    if (s == TcdState::kUndetermined) total += end - since_ns_;
    if (s == expiry_target()) total += now_ns - end;
    return total;
  }
  if (s == state_) total += now_ns - since_ns_;
  return total;
}

void TcdDetector::settle(uint64_t now_ns) {
  now_ns = observe(now_ns);
  advance(now_ns);
  charge(now_ns);
}

}  // namespace sluice
