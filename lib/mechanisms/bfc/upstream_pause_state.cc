#include "lib/mechanisms/bfc/upstream_pause_state.h"

#include <algorithm>
#include <bit>

namespace sluice {

UpstreamPauseState::UpstreamPauseState(EgressPort* port)
    : port_(port),
      num_queues_(port->num_queues()),
      paused_(num_queues_),
      holders_(std::make_unique<uint64_t[]>(num_queues_)) {}

UpstreamPauseState::UpstreamPauseState(uint32_t num_queues)
    : num_queues_(std::clamp<uint32_t>(num_queues, 1, QueueSet::kMaxSize)),
      paused_(num_queues_),
      holders_(std::make_unique<uint64_t[]>(num_queues_)) {}

bool UpstreamPauseState::on_pause(uint8_t shard, uint16_t q) {
  if (shard >= kMaxShards || q >= num_queues_) {
    invalid_frames.add(1);
    return false;
  }
  hold(shard, q);
  return true;
}

bool UpstreamPauseState::on_resume(uint8_t shard, uint16_t q) {
  if (shard >= kMaxShards || q >= num_queues_) {
    invalid_frames.add(1);
    return false;
  }
  release(shard, q);
  return true;
}

bool UpstreamPauseState::on_bitmap(uint8_t shard, const uint8_t* bits, uint16_t count) {
  if (shard >= kMaxShards) {
    invalid_frames.add(1);
    return false;
  }
  if (!beyond_clear(bits, count)) unknown_queue_bitmaps.add(1);
  // Only the queues the bitmap sets or something holds can change: a word
  // at a time, so a NIC's thousands of queues cost what they hold.
  const uint32_t described = std::min<uint32_t>(count, num_queues_);
  for (uint32_t i = 0; i < paused_.num_words(); ++i) {
    const uint64_t set = bfc_bitmap_word(bits, described, i);
    for (uint64_t m = set | paused_.word(i); m != 0; m &= m - 1) {
      const uint16_t q = static_cast<uint16_t>(i * 64 + std::countr_zero(m));
      apply_bit(shard, q, (set >> (q % 64)) & 1);
    }
  }
  return true;
}

void UpstreamPauseState::apply_bit(uint8_t shard, uint16_t q, bool set) {
  if (set == holds(shard, q)) return;
  if (set) {
    bitmap_repaired_pauses.add(1);
    hold(shard, q);
  } else {
    bitmap_repaired_resumes.add(1);
    release(shard, q);
  }
}

bool UpstreamPauseState::on_message(const ControlMessage& msg) {
  switch (msg.type) {
    case ControlType::kBfcPause:
      return on_pause(msg.shard, msg.queue());
    case ControlType::kBfcResume:
      return on_resume(msg.shard, msg.queue());
    case ControlType::kBfcBitmap:
      return on_bitmap(msg.shard, msg.entries, msg.count);
    default:
      return false;
  }
}

// A peer may describe more queues than this port has; pausing them is an error
// of the peer's, but must not stop the bits that do name our queues.
bool UpstreamPauseState::beyond_clear(const uint8_t* bits, uint16_t count) const {
  for (uint16_t q = static_cast<uint16_t>(num_queues_); q < count; ++q)
    if ((bits[q / 8] >> (q % 8)) & 1) return false;
  return true;
}

void UpstreamPauseState::hold(uint8_t shard, uint16_t q) {
  const uint64_t before = holders_[q];
  holders_[q] |= uint64_t{1} << shard;
  if (before != 0) return;
  paused_.set(q);
  paused_mask_.set(paused_.word(0));
  paused_count_.add(1);
  if (port_ != nullptr) port_->pause_queue(q, UINT64_MAX);
}

void UpstreamPauseState::release(uint8_t shard, uint16_t q) {
  const uint64_t before = holders_[q];
  holders_[q] &= ~(uint64_t{1} << shard);
  if (before == 0 || holders_[q] != 0) return;
  paused_.reset(q);
  paused_mask_.set(paused_.word(0));
  paused_count_.sub(1);
  if (port_ != nullptr) port_->resume_queue(q);
}

}  // namespace sluice
