#include "lib/mechanisms/tcd/tcd_port.h"

#include <stdexcept>

namespace sluice {

TcdPort::TcdPort(const TcdParams& params, TcdCodepoints cp, uint32_t num_queues, uint64_t now_ns)
    : marker_(cp) {
  if (num_queues == 0 || num_queues > 64)
    throw std::invalid_argument("TcdPort: num_queues must be 1..64");
  queues_.reserve(num_queues);
  for (uint32_t q = 0; q < num_queues; ++q)
    queues_.push_back(std::make_unique<TcdDetector>(params, now_ns));
}

uint64_t TcdPort::time_ns(TcdState s) const {
  uint64_t t = 0;
  for (const auto& d : queues_) t += d->stats().time_ns[index_of(s)].get();
  return t;
}

uint64_t TcdPort::transitions(TcdState from, TcdState to) const {
  uint64_t n = 0;
  for (const auto& d : queues_) n += d->stats().transitions[index_of(from)][index_of(to)].get();
  return n;
}

uint64_t TcdPort::pauses() const {
  uint64_t n = 0;
  for (const auto& d : queues_) n += d->stats().pauses.get();
  return n;
}

void TcdPort::add_on_periods(LatencyHistogram* h) const {
  for (const auto& d : queues_) {
    const LatencyHistogram& own = d->stats().on_periods;
    for (unsigned b = 0; b < LatencyHistogram::kBuckets; ++b) h->add_to_bucket(b, own.count(b));
    h->add_totals(own.total(), own.sum_ns());
  }
}

}  // namespace sluice
