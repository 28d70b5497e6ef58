#pragma once
// The edge pacer's packet queues (SPEC §4.5, "a bounded per-flow pacer
// queue"): FlowPacer decides when each held packet of a flow may leave; this
// keeps the packets until then and gives them back in time order.
//
// One FIFO per flow slot (FlowletTable's slots, so FlowPacer's), each bounded
// to `per_slot` packets, and a binary min-heap of the slots that hold any,
// keyed by the due time of their head. A slot's due times never decrease
// (FlowPacer's virtual finish times grow along a flow), so the head is the
// slot's earliest and time order across slots is the heap's. Push and pop
// cost O(log slots); nothing is allocated after construction.
//
// Packets are opaque pointers (the data path's mbufs). Single writer.
// docs/mechanisms/flowtune.md ("Edge switches").

#include <cstddef>
#include <cstdint>
#include <vector>

namespace sluice {

class PacedQueues {
 public:
  static constexpr uint64_t kNever = UINT64_MAX;

  struct Held {
    void* pkt;
    uint64_t due_ns;
    uint32_t flow_id;
    uint32_t bytes;
  };

  // slots: a power of two (FlowPacer's capacity); per_slot >= 1 (else
  // std::invalid_argument).
  PacedQueues(uint32_t slots, uint32_t per_slot);

  // Appends to the slot's FIFO. False (nothing kept) when the slot holds
  // per_slot packets already, or due_ns is earlier than the slot's last.
  bool push(uint32_t slot, const Held& h);
  // Gives every packet due at or before now_ns to out(const Held&), earliest
  // first, at most `max` of them. Returns how many.
  template <class Out>
  uint32_t pop_due(uint64_t now_ns, uint32_t max, Out&& out);
  // Gives all of one slot's packets to out, in order (a flowlet that ended,
  // or a lease that ran out: they leave at once).
  template <class Out>
  uint32_t flush(uint32_t slot, Out&& out);

  uint64_t next_due_ns() const { return heap_.empty() ? kNever : head(heap_[0]).due_ns; }
  uint32_t held(uint32_t slot) const { return count_[slot]; }
  uint64_t total_held() const { return total_; }
  uint32_t slots() const { return static_cast<uint32_t>(count_.size()); }
  uint32_t per_slot() const { return per_slot_; }

 private:
  static constexpr uint32_t kNotInHeap = UINT32_MAX;
  const Held& head(uint32_t slot) const { return ring_[size_t(slot) * per_slot_ + first_[slot]]; }
  Held take_head(uint32_t slot);
  uint64_t key(uint32_t heap_index) const { return head(heap_[heap_index]).due_ns; }
  void heap_insert(uint32_t slot);
  void heap_remove(uint32_t heap_index);
  void sift_up(uint32_t i);
  void sift_down(uint32_t i);
  void place(uint32_t i, uint32_t slot) {
    heap_[i] = slot;
    pos_[slot] = i;
  }

  uint32_t per_slot_;
  std::vector<Held> ring_;       // slots × per_slot
  std::vector<uint32_t> first_;  // per slot: ring index of the head
  std::vector<uint32_t> count_;  // per slot: packets held
  std::vector<uint64_t> last_;   // per slot: due time of the tail
  std::vector<uint32_t> pos_;    // per slot: index in heap_, or kNotInHeap
  std::vector<uint32_t> heap_;   // slots holding packets, min-heap by head due
  uint64_t total_ = 0;
};

template <class Out>
uint32_t PacedQueues::pop_due(uint64_t now_ns, uint32_t max, Out&& out) {
  uint32_t n = 0;
  while (n < max && !heap_.empty() && key(0) <= now_ns) {
    const uint32_t slot = heap_[0];
    const Held h = take_head(slot);
    if (count_[slot] == 0) {
      heap_remove(0);
    } else {
      sift_down(0);  // its new head is due no earlier
    }
    out(h);
    ++n;
  }
  return n;
}

template <class Out>
uint32_t PacedQueues::flush(uint32_t slot, Out&& out) {
  const uint32_t n = count_[slot];
  if (n == 0) return 0;
  heap_remove(pos_[slot]);
  for (uint32_t i = 0; i < n; ++i) out(take_head(slot));
  return n;
}

}  // namespace sluice
