#pragma once
// Residence-time histogram with fixed, doubling buckets: bucket i counts
// samples <= 100 ns * 2^i (i = 0 .. 20, i.e. up to ~104.9 ms), the last bucket
// is +Inf. Counts are per bucket (not cumulative); cumulative_count(i) gives
// the Prometheus form. Single writer; every field is a RelaxedCounter so the
// scraper may read while the owner records.

#include <bit>
#include <cstdint>
#include <limits>

#include "lib/common/relaxed_counter.h"

namespace sluice {

class LatencyHistogram {
 public:
  static constexpr uint64_t kBaseNs = 100;
  static constexpr unsigned kFiniteBuckets = 21;  // 100 ns .. 100 ns * 2^20
  static constexpr unsigned kBuckets = kFiniteBuckets + 1;
  static constexpr uint64_t kInf = std::numeric_limits<uint64_t>::max();

  static constexpr unsigned bucket_count() { return kBuckets; }
  // Inclusive upper bound of bucket i; kInf for the last.
  static constexpr uint64_t upper_bound_ns(unsigned i) {
    return i < kFiniteBuckets ? kBaseNs << i : kInf;
  }
  // The bucket a sample falls in: smallest i with ns <= 100 * 2^i, which is
  // ceil(log2(ceil(ns / 100))). No loop: a multiply (the division by a
  // constant) and a count-leading-zeros.
  static constexpr unsigned bucket_of(uint64_t ns) {
    if (ns > upper_bound_ns(kFiniteBuckets - 1)) return kFiniteBuckets;
    uint64_t units = (ns + kBaseNs - 1) / kBaseNs;
    return units <= 1 ? 0 : static_cast<unsigned>(64 - std::countl_zero(units - 1));
  }

  void record(uint64_t ns) {
    counts_[bucket_of(ns)].add(1);
    sum_ns_.add(ns);
    total_.add(1);
  }

  // Batch form (see ResidenceBatch): n samples in bucket i; then the totals.
  void add_to_bucket(unsigned i, uint64_t n) { counts_[i].add(n); }
  void add_totals(uint64_t n, uint64_t sum_ns) {
    sum_ns_.add(sum_ns);
    total_.add(n);
  }

  uint64_t count(unsigned i) const { return counts_[i].get(); }
  uint64_t cumulative_count(unsigned i) const {
    uint64_t c = 0;
    for (unsigned j = 0; j <= i; ++j) c += counts_[j].get();
    return c;
  }
  uint64_t sum_ns() const { return sum_ns_.get(); }
  uint64_t total() const { return total_.get(); }

 private:
  // The totals beside the first buckets: where the histogram starts a
  // cache line, a sample in one of the first six (most of them: residence
  // at an idle port, a link frame on time) writes that one line.
  RelaxedCounter sum_ns_;
  RelaxedCounter total_;
  RelaxedCounter counts_[kBuckets];
};

// Upper bound (ns) of the bucket that holds quantile q in [0, 1]; 0 when the
// histogram is empty, kInf when the quantile is past the last finite bucket.
inline uint64_t quantile_upper_ns(const LatencyHistogram& h, double q) {
  const uint64_t total = h.total();
  if (total == 0) return 0;
  const uint64_t rank = static_cast<uint64_t>(q * double(total - 1)) + 1;
  uint64_t seen = 0;
  for (unsigned b = 0; b < h.bucket_count(); ++b) {
    seen += h.count(b);
    if (seen >= rank) return h.upper_bound_ns(b);
  }
  return LatencyHistogram::kInf;
}

}  // namespace sluice
