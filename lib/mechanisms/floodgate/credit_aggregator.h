#pragma once
// Floodgate's aggregated credits (SPEC 4.1 "Credits" and "delayCredit";
// "Floodgate: Taming Incast in Datacenter Networks", section 2, "practical
// challenge"): when a data packet that came in on a switch-facing port
// starts transmission, its bytes become credit owed to that port's upstream
// switch for its destination. Credit waits per ingress port and goes as one
// FG_CREDIT frame listing every <dst, bytes> when the ingress's pending
// total reaches `threshold_bytes`, or when `interval_ns` has passed since the
// ingress last sent (or tried to) with anything pending.
//
// delayCredit: credit for a destination whose VOQ here holds more than the
// caller's limit is withheld (kept, never lost) at that moment; it is looked
// at again at the next due time, at most one interval later.
//
// One aggregator per lcore and switch: the lcore that transmits the packet
// owns the credit, and sends the frame out of the ingress port (over the
// port owner's control ring when that is another lcore). Ingress ports are
// numbered densely (0..ingress_count-1) by the caller.
// Single writer; no allocation after construction.
// docs/mechanisms/floodgate.md ("Credits").

#include <algorithm>
#include <cstdint>
#include <vector>

#include "lib/common/relaxed_counter.h"
#include "lib/control/control_frame.h"  // CreditEntry, as FG_CREDIT carries it

namespace sluice {

class CreditAggregator {
 public:
  // Distinct destinations one ingress keeps pending.
  static constexpr uint32_t kMaxPending = 256;

  CreditAggregator(uint32_t ingress_count, uint64_t threshold_bytes, uint64_t interval_ns);

  // Credit `bytes` toward dst to ingress i. False (nothing changed) when
  // ingress i already keeps kMaxPending other destinations: the caller
  // sends its frame first (take) and adds again.
  // Inline: every departure from a switch-facing port calls it.
  bool add(uint32_t i, uint32_t dst, uint32_t bytes);
  // Ingress i should send now: the credit added since its last frame
  // reached the threshold, or the interval since that frame passed with
  // credit pending. (Withheld credit alone waits for the interval, so a
  // held-back destination does not make the ingress due on every poll.)
  bool due(uint32_t i, uint64_t now_ns) const {
    const Ingress& g = ingress_[i];
    if (now_ns < g.retry_ns) return false;
    return g.fresh >= threshold_ || (g.total != 0 && now_ns >= g.last_ns + interval_);
  }
  // When ingress i is next due (due() turns true), not before its last
  // take() or a retry_at(); UINT64_MAX with nothing pending. Exact fabric
  // time asks this instead of polling.
  uint64_t next_due_ns(uint32_t i) const {
    const Ingress& g = ingress_[i];
    uint64_t due;
    if (g.fresh >= threshold_) {
      due = g.last_ns;
    } else if (g.total != 0) {
      due = g.last_ns + interval_;
    } else {
      return UINT64_MAX;
    }
    return std::max(due, g.retry_ns);
  }
  // The frame of ingress i could not be sent (no mbuf, a full control
  // queue) and its credit was added back: not due again before t, so that
  // a due time of "now" does not repeat at the same instant forever.
  void retry_at(uint32_t i, uint64_t t) { ingress_[i].retry_ns = t; }
  // Moves up to `max` entries of ingress i whose destination withhold(dst)
  // does not hold back into out[] and restarts its interval. Returns how many.
  template <class Withhold>
  uint32_t take(uint32_t i, uint64_t now_ns, CreditEntry* out, uint32_t max, Withhold&& withhold);

  uint32_t ingress_count() const { return static_cast<uint32_t>(ingress_.size()); }
  uint64_t pending_bytes(uint32_t i) const { return ingress_[i].total; }
  uint64_t interval_ns() const { return interval_; }
  RelaxedCounter withheld_bytes;  // credit held back by delayCredit (each time it was)

 private:
  // An index from destination to its entry, so that many destinations
  // pending cost one probe per packet, not a walk of the list. A slot is
  // valid while its generation is the ingress's (take() starts a new one
  // instead of clearing the slots).
  static constexpr uint32_t kIndexSlots = 2 * kMaxPending;
  struct IndexSlot {
    uint32_t dst = 0;
    uint16_t entry = 0;
    uint16_t generation = 0;
  };
  struct Ingress {
    uint64_t total = 0;    // pending, withheld included
    uint64_t fresh = 0;    // added since the last take()
    uint64_t last_ns = 0;  // the last take()
    uint64_t retry_ns = 0;  // retry_at()
    uint32_t count = 0;
    uint32_t hint = 0;        // index of the last destination added
    uint16_t generation = 1;  // of the index
    CreditEntry entries[kMaxPending];
    IndexSlot index[kIndexSlots];
  };
  static bool has_room(const CreditEntry& e, uint32_t dst, uint32_t bytes) {
    return e.dst_ip == dst && e.credit_bytes <= UINT32_MAX - bytes;
  }
  // The index slot of dst: its own, or the free one where it would go.
  static IndexSlot& slot_of(Ingress& g, uint32_t dst);
  static void reindex(Ingress& g);
  uint64_t threshold_;
  uint64_t interval_;
  std::vector<Ingress> ingress_;
};

// A credit frame lists a destination once, its entry growing, until the
// 32-bit field of the wire entry is full; then a second entry starts (and
// the index points at it). The hint finds the entry at once while one
// destination dominates (an incast); otherwise the index does.
inline bool CreditAggregator::add(uint32_t i, uint32_t dst, uint32_t bytes) {
  Ingress& g = ingress_[i];
  if (g.hint < g.count && has_room(g.entries[g.hint], dst, bytes)) {
    g.entries[g.hint].credit_bytes += bytes;
  } else {
    IndexSlot& s = slot_of(g, dst);
    const bool known = s.generation == g.generation;
    if (known && has_room(g.entries[s.entry], dst, bytes)) {
      g.entries[s.entry].credit_bytes += bytes;
      g.hint = s.entry;
    } else if (g.count == kMaxPending) {
      return false;
    } else {
      g.entries[g.count] = CreditEntry{dst, bytes};
      s = IndexSlot{dst, static_cast<uint16_t>(g.count), g.generation};
      g.hint = g.count++;
    }
  }
  g.total += bytes;
  g.fresh += bytes;
  return true;
}

inline CreditAggregator::IndexSlot& CreditAggregator::slot_of(Ingress& g, uint32_t dst) {
  uint32_t h = static_cast<uint32_t>((uint64_t{dst} * 0x9E3779B97F4A7C15ull) >> 40);
  for (;; ++h) {  // at most kMaxPending of kIndexSlots slots are valid: one is free
    IndexSlot& s = g.index[h % kIndexSlots];
    if (s.generation != g.generation || s.dst == dst) return s;
  }
}

template <class Withhold>
uint32_t CreditAggregator::take(uint32_t i, uint64_t now_ns, CreditEntry* out, uint32_t max,
                                Withhold&& withhold) {
  Ingress& g = ingress_[i];
  g.last_ns = now_ns;
  g.fresh = 0;
  uint32_t taken = 0, kept = 0;
  for (uint32_t e = 0; e < g.count; ++e) {
    const CreditEntry c = g.entries[e];
    if (taken == max || withhold(c.dst_ip)) {
      if (taken != max) withheld_bytes.add(c.credit_bytes);
      g.entries[kept++] = c;
      continue;
    }
    out[taken++] = c;
    g.total -= c.credit_bytes;
  }
  g.count = kept;
  g.hint = 0;
  reindex(g);
  return taken;
}

}  // namespace sluice
