#pragma once
// The exact fabric clock's calendar (docs/testbed.md, "Exact fabric time"):
// every element of the fabric (a port, a mechanism's timer, the end of the
// run) has at most one entry, the next instant it is due. The loop takes the
// earliest entry, handles that element at that instant, and asks it (and
// whatever it touched) when it is next due. Nothing is visited that is not
// due, so an idle port or link costs nothing.
//
// Entries are ordered by (time, element id): a total order, so the elements
// due at one instant are always handled in the same order, whatever order
// they were scheduled in. That order is what makes a run repeat byte for
// byte.
//
// An indexed 4-ary min-heap: set() moves an element's one entry up or down
// (O(log n)), pop() takes the earliest. A 4-ary heap halves the depth of a
// binary one and keeps a node's children in one cache line. Capacity is
// fixed at construction (the element count); no allocation afterwards.
// Time is an argument; nothing here reads a clock.

#include <cstddef>
#include <cstdint>
#include <vector>

namespace sluice {

class EventCalendar {
 public:
  static constexpr uint64_t kNever = UINT64_MAX;

  explicit EventCalendar(uint32_t elements) : pos_(elements, kAbsent), time_(elements, kNever) {
    heap_.reserve(elements);
  }

  uint32_t elements() const { return static_cast<uint32_t>(pos_.size()); }
  bool empty() const { return heap_.empty(); }
  size_t size() const { return heap_.size(); }

  // When element id is due (kNever: not scheduled).
  uint64_t due(uint32_t id) const { return time_[id]; }

  // Element id is due at t (kNever removes its entry). Earlier or later than
  // its current entry, either way.
  void set(uint32_t id, uint64_t t) {
    if (t == kNever) return remove(id);
    const uint32_t at = pos_[id];
    time_[id] = t;
    if (at == kAbsent) {
      pos_[id] = static_cast<uint32_t>(heap_.size());
      heap_.push_back(id);
      up(pos_[id]);
      return;
    }
    up(at);
    down(pos_[id]);
  }
  // Element id is due at t unless it is already due earlier.
  void at_least(uint32_t id, uint64_t t) {
    if (t < time_[id]) set(id, t);
  }
  void remove(uint32_t id) {
    const uint32_t at = pos_[id];
    if (at == kAbsent) return;
    time_[id] = kNever;
    pos_[id] = kAbsent;
    const uint32_t last = heap_.back();
    heap_.pop_back();
    if (last == id) return;
    heap_[at] = last;
    pos_[last] = at;
    up(at);
    down(pos_[last]);
  }

  // The earliest entry's time (kNever when empty) and element.
  uint64_t next_time() const { return heap_.empty() ? kNever : time_[heap_[0]]; }
  uint32_t next_element() const { return heap_[0]; }
  // Takes the earliest entry off; returns its element (not empty()).
  uint32_t pop() {
    const uint32_t id = heap_[0];
    remove(id);
    return id;
  }

 private:
  static constexpr uint32_t kAbsent = UINT32_MAX;
  static constexpr uint32_t kArity = 4;

  bool before(uint32_t a, uint32_t b) const {
    return time_[a] < time_[b] || (time_[a] == time_[b] && a < b);
  }
  void place(uint32_t at, uint32_t id) {
    heap_[at] = id;
    pos_[id] = at;
  }
  void up(uint32_t at) {
    const uint32_t id = heap_[at];
    while (at > 0) {
      const uint32_t parent = (at - 1) / kArity;
      if (!before(id, heap_[parent])) break;
      place(at, heap_[parent]);
      at = parent;
    }
    place(at, id);
  }
  void down(uint32_t at) {
    const uint32_t id = heap_[at];
    const uint32_t n = static_cast<uint32_t>(heap_.size());
    for (;;) {
      const uint32_t first = at * kArity + 1;
      if (first >= n) break;
      uint32_t best = first;
      const uint32_t end = first + kArity < n ? first + kArity : n;
      for (uint32_t c = first + 1; c < end; ++c) {
        if (before(heap_[c], heap_[best])) best = c;
      }
      if (!before(heap_[best], id)) break;
      place(at, heap_[best]);
      at = best;
    }
    place(at, id);
  }

  std::vector<uint32_t> heap_;  // element ids, heap-ordered by (time, id)
  std::vector<uint32_t> pos_;   // element id -> index in heap_ (kAbsent: none)
  std::vector<uint64_t> time_;  // element id -> its entry's time (kNever: none)
};

}  // namespace sluice
