#include "lib/floodgate/credit_aggregator.h"

namespace sluice {

CreditAggregator::CreditAggregator(uint32_t ingress_count, uint64_t threshold_bytes,
                                   uint64_t interval_ns)
    : threshold_(threshold_bytes), interval_(interval_ns), ingress_(ingress_count) {}

// A credit frame lists each destination once: the entry of dst grows. The
// hint finds it at once while one destination dominates (an incast).
bool CreditAggregator::add(uint32_t i, uint32_t dst, uint32_t bytes) {
  Ingress& g = ingress_[i];
  if (g.hint < g.count && g.entries[g.hint].dst == dst) {
    g.entries[g.hint].bytes += bytes;
  } else if (CreditEntry* e = find(g, dst)) {
    e->bytes += bytes;
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

CreditEntry* CreditAggregator::find(Ingress& g, uint32_t dst) {
  for (uint32_t e = 0; e < g.count; ++e) {
    if (g.entries[e].dst == dst) return &g.entries[e];
  }
  return nullptr;
}

}  // namespace sluice
