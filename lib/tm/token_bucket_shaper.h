#pragma once
// Token-bucket shaper that makes any device behave like a link of the
// configured rate. Tokens are kept as transmission time in fixed-point
// picoseconds (kFracBits fractional bits), so both the refill (elapsed ns) and
// the cost of a frame ((frame + overhead) bytes x ps-per-byte) are exact
// integer arithmetic: the long-run rate has no drift, only the rounding of
// ps-per-byte itself (< 1e-7 relative at 100 Gb/s, less at lower rates).
//
// A frame may leave whenever tokens >= 0; it may take tokens negative by its
// own cost, and that deficit is repaid before the next one leaves. Tokens are
// capped at the burst. Time is always an argument (ns).

#include <algorithm>
#include <cstdint>

namespace sluice {

class TokenBucketShaper {
 public:
  static constexpr unsigned kFracBits = 16;
  static constexpr int64_t kFinePerNs = int64_t{1000} << kFracBits;
  static constexpr uint64_t kMinRateBps = 1'000'000;    // below this, refuse (ranges)
  static constexpr uint32_t kMaxFrameBytes = 1u << 20;  // larger frames are costed as this

  // rate_bps == 0: unlimited (ready() is always true). Otherwise rate_bps must
  // be >= kMinRateBps (std::invalid_argument). burst_bytes is in wire bytes
  // (frame + overhead); 0 is taken as 1 byte, i.e. strictly one frame at a
  // time (the caller picks the real default). The bucket starts full.
  TokenBucketShaper(uint64_t rate_bps, uint64_t burst_bytes, uint32_t overhead_bytes);

  bool unlimited() const { return rate_bps_ == 0; }
  uint64_t rate_bps() const { return rate_bps_; }
  uint64_t burst_bytes() const { return burst_bytes_; }
  uint32_t overhead_bytes() const { return overhead_bytes_; }

  // Whether a frame may leave at now_ns.
  bool ready(uint64_t now_ns) {
    advance(now_ns);
    return has_tokens();
  }
  // Charges a frame that left at now_ns.
  void consume(uint64_t now_ns, uint32_t frame_bytes) {
    advance(now_ns);
    spend(frame_bytes);
  }

  // The split form used by the egress port's burst loop: advance once, then
  // test and spend per frame.
  void advance(uint64_t now_ns) {
    // Unlimited: no bucket, so nothing can overflow (and no time is lost).
    if (unlimited()) return;
    if (!started_) {  // the bucket starts full at the first use, whatever the clock says
      started_ = true;
      last_ns_ = now_ns;
      return;
    }
    if (now_ns <= last_ns_) return;  // same instant, or a caller's clock behind ours
    uint64_t elapsed = now_ns - last_ns_;
    last_ns_ = now_ns;
    if (elapsed >= refill_cap_ns_) {
      overflow_ns_ += elapsed - static_cast<uint64_t>(burst_fine_ - tokens_) / kFinePerNs;
      tokens_ = burst_fine_;
    } else {
      const int64_t filled = tokens_ + static_cast<int64_t>(elapsed) * kFinePerNs;
      if (filled > burst_fine_)
        overflow_ns_ += static_cast<uint64_t>(filled - burst_fine_) / kFinePerNs;
      tokens_ = std::min(filled, burst_fine_);
    }
  }
  // Time whose tokens the full bucket could not keep. While frames wait, that
  // is transmit time lost because the caller came back too late.
  uint64_t overflow_ns() const { return overflow_ns_; }
  bool has_tokens() const { return unlimited() || tokens_ >= 0; }
  void spend(uint32_t frame_bytes) { spend_wire(wire_bytes(frame_bytes, overhead_bytes_)); }

  // The burst loop's form of has_tokens / spend, counted in wire bytes so the
  // loop needs no multiply: a frame may leave while wire_budget() minus the
  // wire bytes already sent is >= 0 (exactly when has_tokens() would say so),
  // and spend_wire() then charges them all at once. Not for unlimited().
  int64_t wire_budget() const {
    return tokens_ < 0 ? -1 : tokens_ / static_cast<int64_t>(fine_per_byte_);
  }
  static uint64_t wire_bytes(uint32_t frame_bytes, uint64_t overhead_bytes) {
    return std::min(frame_bytes, kMaxFrameBytes) + overhead_bytes;
  }
  void spend_wire(uint64_t wire_bytes) {
    started_ = true;
    tokens_ -= static_cast<int64_t>(wire_bytes * fine_per_byte_);
  }

  // Earliest time a frame could leave, given what has been charged so far
  // (the last advance time when tokens are already >= 0).
  uint64_t next_ready_ns() const {
    if (has_tokens()) return last_ns_;
    uint64_t owed = static_cast<uint64_t>(-tokens_);
    return last_ns_ + (owed + kFinePerNs - 1) / kFinePerNs;
  }

 private:
  uint64_t rate_bps_;
  uint64_t burst_bytes_;
  uint32_t overhead_bytes_;
  uint64_t fine_per_byte_ = 0;  // ps per wire byte << kFracBits, rounded
  int64_t burst_fine_ = 0;
  uint64_t refill_cap_ns_ = UINT64_MAX;  // idle this long refills the bucket completely
  int64_t tokens_ = 0;
  uint64_t last_ns_ = 0;
  uint64_t overflow_ns_ = 0;
  bool started_ = false;
};

}  // namespace sluice
