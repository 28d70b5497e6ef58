#include "lib/emulator/nic/dst_pause_state.h"

#include <algorithm>

namespace sluice {

DstPauseState::DstPauseState(uint32_t capacity) : dsts_(std::max<uint32_t>(capacity, 1)) {}

uint32_t DstPauseState::lower_bound(uint32_t dst) const {
  return static_cast<uint32_t>(std::lower_bound(dsts_.begin(), dsts_.begin() + size_, dst) -
                               dsts_.begin());
}

uint32_t DstPauseState::find(uint32_t dst) const {
  const uint32_t i = lower_bound(dst);
  return i < size_ && dsts_[i] == dst ? i : kNone;
}

// Closes the time paused so far at the old size.
void DstPauseState::advance(uint64_t at_ns) {
  if (at_ns <= changed_ns_) return;
  closed_ns_ += uint64_t{size_} * (at_ns - changed_ns_);
  changed_ns_ = at_ns;
}

bool DstPauseState::apply(uint64_t at_ns, uint32_t dst, bool pause) {
  (pause ? pauses : resumes).add();
  if (dst == 0) return false;
  const uint32_t i = lower_bound(dst);
  const bool present = i < size_ && dsts_[i] == dst;
  if (present == pause) return false;
  if (pause && size_ == capacity()) {
    overflow.add();
    return false;
  }
  advance(at_ns);
  if (pause) {
    std::copy_backward(dsts_.begin() + i, dsts_.begin() + size_, dsts_.begin() + size_ + 1);
    dsts_[i] = dst;
    ++size_;
  } else {
    std::copy(dsts_.begin() + i + 1, dsts_.begin() + size_, dsts_.begin() + i);
    --size_;
  }
  now_paused.set(size_);
  return true;
}

}  // namespace sluice
