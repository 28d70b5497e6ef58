#pragma once
// The fabric loop's calendar (switch/emulator/fabric_loop.h): the same
// entries and the same (time, element id) order as EventCalendar, for a
// calendar whose entries are nearly all a few microseconds ahead (a frame's
// arrival a link's delay later, a wire free a frame's serialisation later).
//
// A timing wheel of 1 ns slots holds what is due within kSpan ns of its
// base; EventCalendar's heap holds the rest (timers, what lies beyond the
// horizon). A slot holds the entries due at one instant, kept in a list
// sorted by element id, so moving an entry costs a few stores where the
// heap sifted it through four or five levels. The base follows the
// earliest entry handed out, so the wheel always covers the next kSpan ns.
// A bitmap of the slots that hold entries, and a summary bitmap of its
// words, find the next slot in a few word tests however sparse the wheel.
//
// Capacity is fixed at construction (the element count, below
// EventCalendar::kMaxElements); no allocation afterwards. Time is an
// argument; nothing here reads a clock.

#include <bit>
#include <cstdint>
#include <vector>

#include "lib/emulator/event_calendar.h"

namespace sluice {

class WheelCalendar {
 public:
  static constexpr uint64_t kNever = EventCalendar::kNever;
  static constexpr uint32_t kNone = EventCalendar::kNone;
  static constexpr unsigned kSlotBits = 14;
  // How far ahead of its base the wheel reaches: 16.4 µs, a link's delay
  // and a frame's serialisation at 1 Gb/s with room to spare.
  static constexpr uint64_t kSpan = uint64_t{1} << kSlotBits;

  explicit WheelCalendar(uint32_t elements)
      : node_(elements), head_(kSpan, kNone), far_(elements) {}

  uint32_t elements() const { return static_cast<uint32_t>(node_.size()); }
  bool empty() const { return in_wheel_ == 0 && far_.empty(); }
  size_t size() const { return in_wheel_ + far_.size(); }

  // When element id is due (kNever: not scheduled).
  uint64_t due(uint32_t id) const {
    const uint64_t t = node_[id].time;
    return t != kNever ? t : far_.due(id);
  }

  // Element id is due at t (kNever removes its entry).
  [[gnu::always_inline]] void set(uint32_t id, uint64_t t) {
    if (t == kNever) return remove(id);
    Node& n = node_[id];
    if (n.time == t) return;
    first_ = kUnknown;
    const bool near = t - base_ < kSpan;
    if (n.time != kNever) {
      unlink(id);
    } else if (!near) {
      return set_far(id, t);  // moves its heap entry, if any
    } else if (far_.due(id) != kNever) {
      remove_far(id);
    }
    if (near) {
      link(id, t);
    } else {
      set_far(id, t);
    }
  }
  // Element id is due at t unless it is already due earlier.
  void at_least(uint32_t id, uint64_t t) {
    if (t < due(id)) set(id, t);
  }
  void remove(uint32_t id) {
    first_ = kUnknown;
    if (node_[id].time != kNever) return unlink(id);
    if (far_.due(id) != kNever) remove_far(id);
  }

  // The earliest entry's time (kNever when empty, or beyond the horizon).
  // The wheel's base moves up to it: nothing is set earlier than the
  // earliest entry once it has been seen (the loop handles it next).
  uint64_t next_time() {
    const uint32_t id = earliest();
    if (id == kNone) return kNever;
    const uint64_t t = due(id);
    if (t >= EventCalendar::kHorizon) return kNever;
    // Not so close to the horizon that the wheel would reach past it.
    if (t > base_ && t < EventCalendar::kHorizon - kSpan) base_ = t;
    return t;
  }
  uint32_t next_element() const { return earliest(); }
  uint32_t next_element_or_none() const { return earliest(); }
  // The element whose entry comes after the earliest's (kNone: none).
  uint32_t second_element() const {
    if (size() < 2) return kNone;
    // The two earliest of the wheel's and the two earliest of the heap's.
    uint64_t first = UINT64_MAX, second = UINT64_MAX;
    auto offer = [&](uint64_t key) {
      if (key < first) {
        second = first;
        first = key;
      } else if (key < second) {
        second = key;
      }
    };
    if (in_wheel_ != 0) {
      const uint32_t slot = first_slot_from(slot_of(base_));
      const uint32_t a = head_[slot];
      offer(key_of(a));
      if (node_[a].next != kNone) {
        offer(key_of(node_[a].next));
      } else if (in_wheel_ > 1) {
        offer(key_of(head_[first_slot_from((slot + 1) & kMask)]));
      }
    }
    if (far_first_key_ != UINT64_MAX) {
      offer(far_first_key_);
      const uint32_t b = far_.second_element();
      if (b != kNone) offer(far_key(b));
    }
    return id_of(second);
  }
  // A guess at second_element() for prefetching, in a few instructions:
  // the wheel's entry after the earliest (kNone: the earliest is the
  // heap's, or the wheel holds no other). The heap's entries are not
  // looked at: one of them comes second only when a timer falls due.
  uint32_t likely_second() const {
    const uint32_t first = earliest();
    if (first == kNone) return kNone;
    const Node& n = node_[first];
    if (n.time == kNever) return kNone;
    if (n.next != kNone) return n.next;
    if (in_wheel_ < 2) return kNone;
    return head_[first_slot_from((slot_of(n.time) + 1) & kMask)];
  }
  // Takes the earliest entry off; returns its element (not empty()).
  uint32_t pop() {
    next_time();  // the base moves up to it
    const uint32_t id = earliest();
    remove(id);
    return id;
  }

 private:
  static constexpr uint64_t kMask = kSpan - 1;
  static constexpr uint32_t kWords = kSpan / 64;          // the slots' bitmap
  static constexpr uint32_t kSummaryWords = kWords / 64;  // its words' bitmap
  static_assert(kSummaryWords >= 1);

  struct Node {
    uint64_t time = kNever;  // kNever: not in the wheel
    uint32_t next = kNone;   // the slot's list, by element id
    uint32_t prev = kNone;
  };

  static constexpr uint32_t kUnknown = kNone - 1;  // first_ not known

  static uint32_t slot_of(uint64_t t) { return static_cast<uint32_t>(t & kMask); }
  uint64_t key_of(uint32_t id) const { return node_[id].time << EventCalendar::kIdBits | id; }
  uint64_t far_key(uint32_t id) const {
    const uint64_t t = far_.due(id);
    return (t < EventCalendar::kHorizon ? t : EventCalendar::kHorizon) << EventCalendar::kIdBits |
           id;
  }

  // The heap's entries, and the key of its earliest (kept, as the loop
  // looks at it several times an event and the heap changes seldom).
  void set_far(uint32_t id, uint64_t t) {
    far_.set(id, t);
    far_first_key_ = far_key(far_.next_element());
  }
  void remove_far(uint32_t id) {
    far_.remove(id);
    far_first_key_ = far_.empty() ? UINT64_MAX : far_key(far_.next_element());
  }

  // The earliest entry's element, the wheel's or the heap's (kNone: empty).
  // Kept until an entry changes.
  uint32_t earliest() const {
    if (first_ != kUnknown) return first_;
    uint32_t best = kNone;
    uint64_t best_key = UINT64_MAX;
    if (in_wheel_ != 0) {
      best = head_[first_slot_from(slot_of(base_))];
      best_key = key_of(best);
    }
    if (far_first_key_ < best_key) best = id_of(far_first_key_);
    first_ = best;
    return best;
  }
  static uint32_t id_of(uint64_t key) {
    return static_cast<uint32_t>(key & (EventCalendar::kMaxElements - 1));
  }

  // Files id at t (within reach) in its slot's list, in id order.
  void link(uint32_t id, uint64_t t) {
    Node& n = node_[id];
    n.time = t;
    const uint32_t slot = slot_of(t);
    uint32_t prev = kNone, at = head_[slot];
    while (at != kNone && at < id) {
      prev = at;
      at = node_[at].next;
    }
    n.prev = prev;
    n.next = at;
    if (at != kNone) node_[at].prev = id;
    if (prev != kNone) {
      node_[prev].next = id;
    } else {
      head_[slot] = id;
      words_[slot >> 6] |= uint64_t{1} << (slot & 63);
      summary_[slot >> 12] |= uint64_t{1} << ((slot >> 6) & 63);
    }
    ++in_wheel_;
  }
  void unlink(uint32_t id) {
    Node& n = node_[id];
    const uint32_t slot = slot_of(n.time);
    if (n.next != kNone) node_[n.next].prev = n.prev;
    if (n.prev != kNone) {
      node_[n.prev].next = n.next;
    } else {
      head_[slot] = n.next;
      if (n.next == kNone) {
        uint64_t& w = words_[slot >> 6];
        w &= ~(uint64_t{1} << (slot & 63));
        if (w == 0) summary_[slot >> 12] &= ~(uint64_t{1} << ((slot >> 6) & 63));
      }
    }
    n = Node{};
    --in_wheel_;
  }

  // The first slot at or after `from`, going round (the wheel is not
  // empty): its entries are the wheel's earliest when `from` is the base's.
  uint32_t first_slot_from(uint32_t from) const {
    const uint32_t w = from >> 6;
    const uint64_t here = words_[w] & (~uint64_t{0} << (from & 63));
    if (here != 0) return w << 6 | static_cast<uint32_t>(std::countr_zero(here));
    // The next word that holds any, going round back to w (whose slots
    // before `from` are then the latest of the wheel).
    const uint32_t start = (w + 1) & (kWords - 1);
    uint32_t i = start >> 6;
    uint64_t bits = summary_[i] & (~uint64_t{0} << (start & 63));
    for (uint32_t k = 0; bits == 0 && k < kSummaryWords; ++k) {
      i = (i + 1) & (kSummaryWords - 1);
      bits = summary_[i];
    }
    const uint32_t word = i << 6 | static_cast<uint32_t>(std::countr_zero(bits));
    return word << 6 | static_cast<uint32_t>(std::countr_zero(words_[word]));
  }

  std::vector<Node> node_;      // by element id
  std::vector<uint32_t> head_;  // by slot: the first element (kNone: empty)
  uint64_t words_[kWords] = {};
  uint64_t summary_[kSummaryWords] = {};
  uint64_t base_ = 0;  // every wheel entry is in [base_, base_ + kSpan)
  uint32_t in_wheel_ = 0;
  mutable uint32_t first_ = kNone;       // earliest(), or kUnknown
  EventCalendar far_;                    // entries out of the wheel's reach
  uint64_t far_first_key_ = UINT64_MAX;  // its earliest entry's key
};

}  // namespace sluice
