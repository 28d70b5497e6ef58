#include "lib/floodgate/credit_aggregator.h"

namespace sluice {

CreditAggregator::CreditAggregator(uint32_t ingress_count, uint64_t threshold_bytes,
                                   uint64_t interval_ns)
    : threshold_(threshold_bytes), interval_(interval_ns), ingress_(ingress_count) {}

// A credit frame lists a destination once, its entry growing, until the
// 32-bit field of the wire entry is full; then a second entry starts (and
// the index points at it). The hint finds the entry at once while one
// destination dominates (an incast); otherwise the index does.
bool CreditAggregator::add(uint32_t i, uint32_t dst, uint32_t bytes) {
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

CreditAggregator::IndexSlot& CreditAggregator::slot_of(Ingress& g, uint32_t dst) {
  uint32_t h = static_cast<uint32_t>((uint64_t{dst} * 0x9E3779B97F4A7C15ull) >> 40);
  for (;; ++h) {  // at most kMaxPending of kIndexSlots slots are valid: one is free
    IndexSlot& s = g.index[h % kIndexSlots];
    if (s.generation != g.generation || s.dst == dst) return s;
  }
}

// After take(): the kept entries (withheld ones) are indexed afresh under a
// new generation; the last entry of a destination wins, being the one with
// room.
void CreditAggregator::reindex(Ingress& g) {
  if (++g.generation == 0) {  // wrapped: old slots could look valid again
    for (IndexSlot& s : g.index) s = IndexSlot{};
    g.generation = 1;
  }
  for (uint32_t e = 0; e < g.count; ++e) {
    IndexSlot& s = slot_of(g, g.entries[e].dst_ip);
    s = IndexSlot{g.entries[e].dst_ip, static_cast<uint16_t>(e), g.generation};
  }
}

}  // namespace sluice
