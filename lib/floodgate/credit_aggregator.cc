#include "lib/floodgate/credit_aggregator.h"

namespace sluice {

CreditAggregator::CreditAggregator(uint32_t ingress_count, uint64_t threshold_bytes,
                                   uint64_t interval_ns)
    : threshold_(threshold_bytes), interval_(interval_ns), ingress_(ingress_count) {}

// A credit frame lists a destination once, its entry growing, until the
// 32-bit field of the wire entry is full; then a second entry starts. The
// hint finds the entry at once while one destination dominates (an incast).
bool CreditAggregator::add(uint32_t i, uint32_t dst, uint32_t bytes) {
  Ingress& g = ingress_[i];
  if (g.hint < g.count && has_room(g.entries[g.hint], dst, bytes)) {
    g.entries[g.hint].credit_bytes += bytes;
  } else if (CreditEntry* e = find(g, dst, bytes)) {
    e->credit_bytes += bytes;
    g.hint = static_cast<uint32_t>(e - g.entries);
  } else if (g.count == kMaxPending) {
    return false;
  } else {
    g.entries[g.count] = CreditEntry{dst, bytes};
    g.hint = g.count++;
  }
  g.total += bytes;
  g.fresh += bytes;
  return true;
}

CreditEntry* CreditAggregator::find(Ingress& g, uint32_t dst, uint32_t bytes) {
  for (uint32_t e = 0; e < g.count; ++e) {
    if (has_room(g.entries[e], dst, bytes)) return &g.entries[e];
  }
  return nullptr;
}

}  // namespace sluice
