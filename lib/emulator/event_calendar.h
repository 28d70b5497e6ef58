#pragma once
// A calendar of fabric time (docs/emulator.md, "The calendar"): every
// element (a port, a mechanism's timer, a host's sender) has at most one
// entry, the next instant it is due. The fabric loop keeps its entries of
// the next microseconds in a timing wheel (wheel_calendar.h) and the rest
// here; each emulated host keeps its transports' timers here. The loop takes the earliest entry,
// handles that element at that instant, and asks it (and whatever it
// touched) when it is next due. Nothing is visited that is not due, so an
// idle port or link costs nothing.
//
// Entries are ordered by (time, element id): a total order, so elements due
// at one instant always come out in the same order, whatever order they
// were scheduled in. That order is part of what makes a run repeat.
//
// An indexed 4-ary min-heap: set() moves an element's one entry up or down
// (O(log n)), pop() takes the earliest. An entry is one 64-bit key, the
// time above the element id, so (time, id) order is one comparison; a
// node's four children share half a cache line (the array is placed so),
// and slots past the end hold the largest key, so the smallest child is
// found without a bound check or a branch per child. Capacity is fixed at
// construction (the element count, below kMaxElements); no allocation
// afterwards.
// Time is an argument; nothing here reads a clock.
//
// The key keeps 44 bits of time: the calendar sees up to kHorizon ns
// (4.8 hours of fabric time from its epoch); an element due later than
// that is kept at kHorizon and never comes out (next_time() is kNever), as
// if it were not due at all.

#include <cstddef>
#include <cstdint>
#include <utility>
#include <vector>

namespace sluice {

class EventCalendar {
 public:
  static constexpr uint64_t kNever = UINT64_MAX;
  static constexpr uint32_t kNone = UINT32_MAX;  // no element
  static constexpr unsigned kIdBits = 20;
  static constexpr uint32_t kMaxElements = uint32_t{1} << kIdBits;
  static constexpr uint64_t kHorizon = (uint64_t{1} << (64 - kIdBits)) - 1;
  // A rule that could not act for want of a resource (an mbuf, room in a
  // control queue) asks again this much later: asking again at the same
  // instant would keep time from moving.
  static constexpr uint64_t kRetryNs = 1'000;

  // elements: fewer than kMaxElements (the largest id would make the key of
  // an entry at the horizon equal to an empty slot's).
  explicit EventCalendar(uint32_t elements)
      : pos_(elements, kAbsent), store_(elements + kArity + kPad, kEmpty) {
    // Index 1 (the root's first child) on a 32-byte boundary: every
    // node's children, 4i+1 .. 4i+4, then lie in one half cache line.
    const auto addr = reinterpret_cast<uintptr_t>(store_.data() + 1);
    heap_ = store_.data() + ((kPad - (addr / sizeof(uint64_t)) % kPad) % kPad);
  }
  EventCalendar(const EventCalendar&) = delete;
  EventCalendar& operator=(const EventCalendar&) = delete;
  EventCalendar(EventCalendar&& o) noexcept { *this = std::move(o); }
  EventCalendar& operator=(EventCalendar&& o) noexcept {
    const size_t base = o.heap_ - o.store_.data();
    pos_ = std::move(o.pos_);
    store_ = std::move(o.store_);
    heap_ = store_.data() + base;
    n_ = o.n_;
    o.heap_ = nullptr;
    o.n_ = 0;
    return *this;
  }

  uint32_t elements() const { return static_cast<uint32_t>(pos_.size()); }
  bool empty() const { return n_ == 0; }
  size_t size() const { return n_; }

  // When element id is due (kNever: not scheduled).
  uint64_t due(uint32_t id) const {
    return pos_[id] == kAbsent ? kNever : heap_[pos_[id]] >> kIdBits;
  }

  // Element id is due at t (kNever removes its entry). Earlier or later than
  // its current entry, either way.
  void set(uint32_t id, uint64_t t) {
    if (t == kNever) return remove(id);
    const uint64_t key = (t < kHorizon ? t : kHorizon) << kIdBits | id;
    const uint32_t at = pos_[id];
    if (at == kAbsent) {
      heap_[n_] = key;
      up(n_++, key);
      return;
    }
    const uint64_t old = heap_[at];
    if (key < old) {
      up(at, key);
    } else if (key > old) {
      down(at, key);
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
    const uint64_t last = heap_[--n_];
    heap_[n_] = kEmpty;
    if (at == n_) return;
    // The last entry fills the hole, moving up or down from there.
    if (at > 0 && last < heap_[(at - 1) / kArity]) {
      up(at, last);
    } else {
      down(at, last);
    }
  }

  // The earliest entry's time (kNever when empty, or beyond the horizon)
  // and element.
  uint64_t next_time() const {
    const uint64_t t = n_ == 0 ? kNever : heap_[0] >> kIdBits;
    return t >= kHorizon ? kNever : t;
  }
  uint32_t next_element() const { return id_of(heap_[0]); }
  uint32_t next_element_or_none() const { return n_ == 0 ? kNone : id_of(heap_[0]); }
  // The element whose entry comes after the earliest's (kNone: none): the
  // earliest of the root's children.
  uint32_t second_element() const {
    if (n_ < 2) return kNone;
    return id_of(heap_[min_child(1)]);
  }
  // Takes the earliest entry off; returns its element (not empty()).
  uint32_t pop() {
    const uint32_t id = id_of(heap_[0]);
    pos_[id] = kAbsent;
    const uint64_t last = heap_[--n_];
    heap_[n_] = kEmpty;
    if (n_ != 0) down(0, last);
    return id;
  }

 private:
  static constexpr uint32_t kAbsent = UINT32_MAX;
  static constexpr uint32_t kArity = 4;
  static constexpr uint32_t kPad = 4;  // 32 bytes of keys
  static constexpr uint64_t kEmpty = UINT64_MAX;  // a slot past the end: later than any entry

  static uint32_t id_of(uint64_t key) {
    return static_cast<uint32_t>(key & (kMaxElements - 1));
  }
  // The smallest of the four slots from `first` (slots past the end are
  // kEmpty, so they never win).
  uint32_t min_child(uint32_t first) const {
    const uint64_t* c = heap_ + first;
    const uint32_t a = c[1] < c[0] ? first + 1 : first;
    const uint32_t b = c[3] < c[2] ? first + 3 : first + 2;
    return heap_[b] < heap_[a] ? b : a;
  }
  // Places `key` at `at` or above it.
  void up(uint32_t at, uint64_t key) {
    while (at > 0) {
      const uint32_t parent = (at - 1) / kArity;
      const uint64_t pk = heap_[parent];
      if (key >= pk) break;
      heap_[at] = pk;
      pos_[id_of(pk)] = at;
      at = parent;
    }
    heap_[at] = key;
    pos_[id_of(key)] = at;
  }
  // Places `key` at `at` or below it.
  void down(uint32_t at, uint64_t key) {
    for (;;) {
      const uint32_t first = at * kArity + 1;
      if (first >= n_) break;
      const uint32_t best = min_child(first);
      const uint64_t bk = heap_[best];
      if (bk >= key) break;
      heap_[at] = bk;
      pos_[id_of(bk)] = at;
      at = best;
    }
    heap_[at] = key;
    pos_[id_of(key)] = at;
  }

  std::vector<uint32_t> pos_;    // element id -> index in the heap (kAbsent: none)
  std::vector<uint64_t> store_;  // the heap's keys, with room to align it; kEmpty past the end
  uint64_t* heap_ = nullptr;     // the heap: store_ from its aligned start
  uint32_t n_ = 0;               // entries
};

}  // namespace sluice
