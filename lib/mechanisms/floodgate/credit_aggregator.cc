#include "lib/mechanisms/floodgate/credit_aggregator.h"

namespace sluice {

CreditAggregator::CreditAggregator(uint32_t ingress_count, uint64_t threshold_bytes,
                                   uint64_t interval_ns)
    : threshold_(threshold_bytes), interval_(interval_ns), ingress_(ingress_count) {}

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
