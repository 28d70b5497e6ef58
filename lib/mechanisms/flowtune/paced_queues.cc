#include "lib/mechanisms/flowtune/paced_queues.h"

#include <bit>
#include <stdexcept>

namespace sluice {

PacedQueues::PacedQueues(uint32_t slots, uint32_t per_slot) : per_slot_(per_slot) {
  if (slots == 0 || !std::has_single_bit(slots))
    throw std::invalid_argument("paced queues: slots must be a power of two");
  if (per_slot == 0) throw std::invalid_argument("paced queues: per_slot must be at least 1");
  ring_.resize(size_t(slots) * per_slot);
  first_.assign(slots, 0);
  count_.assign(slots, 0);
  last_.assign(slots, 0);
  pos_.assign(slots, kNotInHeap);
  heap_.reserve(slots);
}

bool PacedQueues::push(uint32_t slot, const Held& h) {
  const uint32_t n = count_[slot];
  if (n >= per_slot_ || (n > 0 && h.due_ns < last_[slot])) return false;
  uint32_t at = first_[slot] + n;
  if (at >= per_slot_) at -= per_slot_;
  ring_[size_t(slot) * per_slot_ + at] = h;
  count_[slot] = n + 1;
  last_[slot] = h.due_ns;
  ++total_;
  if (n == 0) heap_insert(slot);
  return true;
}

PacedQueues::Held PacedQueues::take_head(uint32_t slot) {
  const Held h = head(slot);
  first_[slot] = first_[slot] + 1 == per_slot_ ? 0 : first_[slot] + 1;
  --count_[slot];
  --total_;
  return h;
}

void PacedQueues::heap_insert(uint32_t slot) {
  heap_.push_back(slot);
  pos_[slot] = static_cast<uint32_t>(heap_.size() - 1);
  sift_up(pos_[slot]);
}

// Removes heap_[i] (its slot must be empty now or about to be emptied).
void PacedQueues::heap_remove(uint32_t i) {
  const uint32_t slot = heap_[i];
  const uint32_t last = heap_.back();
  heap_.pop_back();
  pos_[slot] = kNotInHeap;
  if (i == heap_.size()) return;
  place(i, last);
  sift_up(i);
  sift_down(pos_[last]);
}

void PacedQueues::sift_up(uint32_t i) {
  const uint32_t slot = heap_[i];
  const uint64_t k = head(slot).due_ns;
  while (i > 0) {
    const uint32_t parent = (i - 1) / 2;
    if (key(parent) <= k) break;
    place(i, heap_[parent]);
    i = parent;
  }
  place(i, slot);
}

void PacedQueues::sift_down(uint32_t i) {
  const uint32_t n = static_cast<uint32_t>(heap_.size());
  const uint32_t slot = heap_[i];
  const uint64_t k = head(slot).due_ns;
  for (;;) {
    uint32_t child = 2 * i + 1;
    if (child >= n) break;
    if (child + 1 < n && key(child + 1) < key(child)) ++child;
    if (key(child) >= k) break;
    place(i, heap_[child]);
    i = child;
  }
  place(i, slot);
}

}  // namespace sluice
