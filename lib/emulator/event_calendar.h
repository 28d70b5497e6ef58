#pragma once
// The exact fabric clock's calendar (docs/emulator.md, "Fabric time"):
// every element of the fabric (a port, a mechanism's timer) has at most one
// entry, the next instant it is due. The loop takes the earliest entry,
// handles that element at that instant, and asks it (and whatever it
// touched) when it is next due. Nothing is visited that is not due, so an
// idle port or link costs nothing.
//
// Entries are ordered by (time, element id): a total order, so elements due
// at one instant always come out in the same order, whatever order they
// were scheduled in. That order is part of what makes a run repeat.
//
// An indexed 4-ary min-heap: set() moves an element's one entry up or down
// (O(log n)), pop() takes the earliest. Each heap slot holds the entry's time
// beside its id, so a comparison reads one slot, and a 4-ary heap halves
// the depth of a binary one with a node's children in one cache line.
// Capacity is fixed at construction (the element count); no allocation
// afterwards. Time is an argument; nothing here reads a clock.

#include <cstddef>
#include <cstdint>
#include <vector>

namespace sluice {

class EventCalendar {
 public:
  static constexpr uint64_t kNever = UINT64_MAX;
  // A rule that could not act for want of a resource (an mbuf, room in a
  // control queue) asks again this much later: asking again at the same
  // instant would keep time from moving.
  static constexpr uint64_t kRetryNs = 1'000;

  explicit EventCalendar(uint32_t elements) : pos_(elements, kAbsent) { heap_.reserve(elements); }

  uint32_t elements() const { return static_cast<uint32_t>(pos_.size()); }
  bool empty() const { return heap_.empty(); }
  size_t size() const { return heap_.size(); }

  // When element id is due (kNever: not scheduled).
  uint64_t due(uint32_t id) const { return pos_[id] == kAbsent ? kNever : heap_[pos_[id]].t; }

  // Element id is due at t (kNever removes its entry). Earlier or later than
  // its current entry, either way.
  void set(uint32_t id, uint64_t t) {
    if (t == kNever) return remove(id);
    const uint32_t at = pos_[id];
    if (at == kAbsent) {
      heap_.push_back({t, id});
      up(static_cast<uint32_t>(heap_.size() - 1));
      return;
    }
    const uint64_t old = heap_[at].t;
    heap_[at].t = t;
    if (t < old) {
      up(at);
    } else if (t > old) {
      down(at);
    }
  }
  // Element id is due at t unless it is already due earlier.
  void at_least(uint32_t id, uint64_t t) {
    if (t < due(id)) set(id, t);
  }
  void remove(uint32_t id) {
    const uint32_t at = pos_[id];
    if (at == kAbsent) return;
    pos_[id] = kAbsent;
    const Entry last = heap_.back();
    heap_.pop_back();
    if (last.id == id) return;
    heap_[at] = last;
    pos_[last.id] = at;
    up(at);
    down(pos_[last.id]);
  }

  // The earliest entry's time (kNever when empty) and element.
  uint64_t next_time() const { return heap_.empty() ? kNever : heap_[0].t; }
  uint32_t next_element() const { return heap_[0].id; }
  // Takes the earliest entry off; returns its element (not empty()).
  uint32_t pop() {
    const uint32_t id = heap_[0].id;
    pos_[id] = kAbsent;
    const Entry last = heap_.back();
    heap_.pop_back();
    if (!heap_.empty()) {
      heap_[0] = last;
      pos_[last.id] = 0;
      down(0);
    }
    return id;
  }

 private:
  static constexpr uint32_t kAbsent = UINT32_MAX;
  static constexpr uint32_t kArity = 4;

  struct Entry {
    uint64_t t;
    uint32_t id;
  };
  static bool before(const Entry& a, const Entry& b) {
    return a.t < b.t || (a.t == b.t && a.id < b.id);
  }
  void up(uint32_t at) {
    const Entry e = heap_[at];
    while (at > 0) {
      const uint32_t parent = (at - 1) / kArity;
      if (!before(e, heap_[parent])) break;
      heap_[at] = heap_[parent];
      pos_[heap_[at].id] = at;
      at = parent;
    }
    heap_[at] = e;
    pos_[e.id] = at;
  }
  void down(uint32_t at) {
    const Entry e = heap_[at];
    const uint32_t n = static_cast<uint32_t>(heap_.size());
    for (;;) {
      const uint32_t first = at * kArity + 1;
      if (first >= n) break;
      uint32_t best = first;
      const uint32_t end = first + kArity < n ? first + kArity : n;
      for (uint32_t c = first + 1; c < end; ++c) {
        if (before(heap_[c], heap_[best])) best = c;
      }
      if (!before(heap_[best], e)) break;
      heap_[at] = heap_[best];
      pos_[heap_[at].id] = at;
      at = best;
    }
    heap_[at] = e;
    pos_[e.id] = at;
  }

  std::vector<Entry> heap_;    // entries, heap-ordered by (time, id)
  std::vector<uint32_t> pos_;  // element id -> index in heap_ (kAbsent: none)
};

}  // namespace sluice
