#pragma once
// One direction of an internal link: the frames in flight, first in first
// out, put on by the sending port's lcore and taken off by the receiving
// port's (one producer, one consumer; the same lcore for both in most
// fabrics). Its indices and slot pointer sit beside the link's timing
// (switch/runtime/runtime.h, LinkDirection), so a frame crossing a link
// touches that and its slot, not a ring header of three lines. A slot
// holds the frame's due time beside it: the receiver learns when its next
// frame arrives from the slot, without reading the frame, which was
// written a link's delay ago and has left the caches since.

#include <atomic>
#include <cstdint>
#include <memory>

namespace sluice {

// The least power of two from `least` that holds `want` slots, at most 2^20.
constexpr uint32_t link_ring_slots(double want, uint32_t least) {
  uint32_t size = least;
  while (size < want && size < (1u << 20)) size <<= 1;
  return size;
}

// How many frames an internal link's ring holds (one ring per direction):
// twice the frames of minimum size (84 wire bytes) that fit in flight over
// the delay plus 50 us of slack, a power of two from 1024 to 2^20. A full
// ring holds frames back at the sender, never drops.
constexpr uint32_t link_ring_size(uint64_t rate_bps, uint64_t delay_ns) {
  const double frames =
      2.0 * (rate_bps == 0 ? 100e9 : double(rate_bps)) * ((delay_ns + 50'000) * 1e-9) / (84 * 8);
  return link_ring_slots(frames, 1024);
}

// The same in exact fabric time, where a wire carries one frame at a time
// and a receiver takes each frame at its due instant. A frame is in flight
// from its start until its due time, its serialisation's end plus the
// delay; the ends of the frames in flight at T lie in (T - delay, T], a
// minimum frame's serialisation apart, but for the one on the wire: at most
// delay / that + 2. A receiver on another lcore takes its frames up to a
// window late, a window being at most the delay plus a minimum frame: twice
// that, and two bursts on top as slack; a power of two from 64.
// `min_wire_bytes`: the least a frame takes on the wire (a bare Ethernet
// header and the overhead). A small ring's slots stay in the caches as it
// turns, where a large one's are cold at every frame. rate_bps 0 (no
// serialisation): link_ring_size's.
constexpr uint32_t exact_link_ring_size(uint64_t rate_bps, uint64_t delay_ns,
                                        uint32_t min_wire_bytes, uint32_t burst) {
  if (rate_bps == 0 || min_wire_bytes == 0) return link_ring_size(rate_bps, delay_ns);
  const double frames = double(delay_ns) * 1e-9 * double(rate_bps) / (8.0 * min_wire_bytes) + 2;
  return link_ring_slots(2 * frames + 2.0 * burst, 64);
}

// A frame in flight and the instant it is due at the far end. Trivial, so
// that a ring's slots are left unwritten until used.
struct LinkSlot {
  void* frame;
  uint64_t due_ns;
};

class LinkRing {
 public:
  // `slots`: a power of two; the ring holds one frame fewer. Slots are not
  // written until frames fill them, so their pages become resident as used.
  explicit LinkRing(uint32_t slots)
      : mask_(slots - 1), slots_(std::make_unique_for_overwrite<LinkSlot[]>(slots)) {}

  uint32_t capacity() const { return mask_; }
  // Producer side: room for this many more.
  uint32_t free_count() const {
    return mask_ - (prod_.load(std::memory_order_relaxed) - cons_.load(std::memory_order_acquire));
  }
  // Consumer side: frames put on and not yet taken off.
  uint32_t count() const {
    return prod_.load(std::memory_order_acquire) - cons_.load(std::memory_order_relaxed);
  }
  // Producer: puts objs[0..n) on, n at most free_count().
  void put(const LinkSlot* objs, uint32_t n) {
    const uint32_t p = prod_.load(std::memory_order_relaxed);
    for (uint32_t i = 0; i < n; ++i) slots_[(p + i) & mask_] = objs[i];
    prod_.store(p + n, std::memory_order_release);
  }
  // Consumer: the oldest frame not taken off, in its slot (nullptr: none),
  // read in place; pop() takes it off. The producer's index is read again
  // only once the frames seen at the last reading are taken, so where the
  // two ends are on different lcores its line moves once a batch.
  const LinkSlot* front() {
    const uint32_t c = cons_.load(std::memory_order_relaxed);
    if (c == seen_) {
      seen_ = prod_.load(std::memory_order_acquire);
      if (c == seen_) return nullptr;
    }
    return &slots_[c & mask_];
  }
  // front() as the last call left it known, without reading the producer's
  // index (nullptr: none known); for a prefetch.
  const LinkSlot* known_front() const {
    const uint32_t c = cons_.load(std::memory_order_relaxed);
    return c != seen_ ? &slots_[c & mask_] : nullptr;
  }
  // Consumer: takes front() off (it was not nullptr).
  void pop() { cons_.store(cons_.load(std::memory_order_relaxed) + 1, std::memory_order_release); }

 private:
  // Free-running; their difference is what is in flight.
  std::atomic<uint32_t> prod_{0};
  std::atomic<uint32_t> cons_{0};
  uint32_t mask_;
  uint32_t seen_ = 0;  // the consumer's last reading of prod_ (never behind cons_)
  std::unique_ptr<LinkSlot[]> slots_;
};

}  // namespace sluice
