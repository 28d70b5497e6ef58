#include "lib/replay/host_nic.h"

#include <algorithm>

#include "lib/pfc/pause_frame.h"
#include "lib/pfc/pause_quanta.h"

namespace sluice {

void HostNic::pause(uint64_t at_ns, uint64_t pause_ns) {
  if (!enabled()) return;
  if (count_ == kMaxPending) apply_oldest();
  // Keep the pending frames in time order and never before the last poll.
  uint64_t at = std::max(at_ns, polled_ns_);
  if (count_ != 0) at = std::max(at, pending_[(head_ + count_ - 1) % kMaxPending].at_ns);
  pending_[(head_ + count_) % kMaxPending] = {at, pause_ns};
  ++count_;
}

void HostNic::apply_oldest() {
  const Event e = pending_[head_];
  head_ = (head_ + 1) % kMaxPending;
  --count_;
  apply(e);
}

void HostNic::apply(const Event& e) {
  if (open_ && e.at_ns < end_ns_) {  // a running pause: restart its timer
    end_ns_ = e.at_ns + e.pause_ns;
    return;
  }
  if (open_) closed_ns_ += end_ns_ - start_ns_;
  open_ = false;
  if (e.pause_ns == 0) return;  // resume while not paused: nothing to do
  open_ = true;
  start_ns_ = e.at_ns;
  end_ns_ = e.at_ns + e.pause_ns;
}

bool HostNic::poll(uint64_t now_ns) {
  while (count_ != 0 && pending_[head_].at_ns <= now_ns) apply_oldest();
  polled_ns_ = std::max(polled_ns_, now_ns);
  return !paused_at(now_ns);
}

uint64_t HostNic::wire_free_ns() const {
  return static_cast<uint64_t>((wire_free_ + rate_bps_ - 1) / rate_bps_);
}

uint64_t HostNic::start_ns(uint64_t due_ns) const {
  if (!enabled()) return due_ns;
  // end_ns_ stays the last pause's end after it closes; 0 before any pause.
  return std::max({due_ns, wire_free_ns(), end_ns_});
}

void HostNic::sent(uint64_t start_ns, uint32_t bytes) {
  if (!enabled()) return;
  // A frame that waited only for the wire starts at its exact end, not at
  // the rounded-up nanosecond, so rounding never accumulates.
  if (start_ns > wire_free_ns()) wire_free_ = static_cast<unsigned __int128>(start_ns) * rate_bps_;
  wire_free_ +=
      static_cast<unsigned __int128>(uint64_t{bytes} + overhead_bytes_) * 8 * 1'000'000'000ull;
}

uint64_t HostNic::paused_ns(uint64_t now_ns) const {
  if (!open_ || now_ns <= start_ns_) return closed_ns_;
  return closed_ns_ + std::min(now_ns, end_ns_) - start_ns_;
}

std::optional<uint64_t> host_pause_ns(const uint8_t* frame, uint32_t len, uint64_t rate_bps) {
  constexpr uint32_t kTypeOffset = 12;
  constexpr uint32_t kBodyOffset = 14;
  if (len < kBodyOffset) return std::nullopt;
  if (!std::equal(kMacControlDst.begin(), kMacControlDst.end(), frame)) return std::nullopt;
  if (frame[kTypeOffset] != 0x88 || frame[kTypeOffset + 1] != 0x08) return std::nullopt;
  MacControlFrame f;
  if (!parse_mac_control(frame + kBodyOffset, len - kBodyOffset, &f)) return std::nullopt;
  if (f.class_enable == 0) return std::nullopt;
  uint16_t quanta = 0;
  for (uint32_t c = 0; c < kPfcClasses; ++c) {
    if (f.class_enable & (1u << c)) quanta = std::max(quanta, f.quanta[c]);
  }
  return quanta_to_ns(quanta, rate_bps);
}

}  // namespace sluice
