#pragma once
// The residence times of one dequeue burst, tallied in registers and added to
// a LatencyHistogram once (publish()). Every sample of a burst has the same
// dequeue time, so packets enqueued at the same time (a burst of arrivals)
// have the same residence: each costs a compare, and only a change of
// enqueue time does arithmetic (a change of bucket touches the histogram).
// The caller numbers the samples 0, 1, ... (it has that count anyway) so the
// batch need not count them.

#include <cstdint>

#include "lib/tm/latency_histogram.h"

namespace sluice {

class ResidenceBatch {
 public:
  explicit ResidenceBatch(uint64_t now_ns)
      : now_(now_ns), last_enqueue_(now_ns), bucket_(LatencyHistogram::bucket_of(0)) {}

  // Sample number `seq` of the burst: a packet enqueued at enqueue_ns.
  void add(LatencyHistogram& h, uint64_t enqueue_ns, uint64_t seq) {
    if (enqueue_ns != last_enqueue_) [[unlikely]]
      switch_enqueue(h, enqueue_ns, seq);
  }

  // Adds the `total` samples of the burst to h.
  void publish(LatencyHistogram& h, uint64_t total) {
    if (total == 0) return;
    end_same(total);
    if (total != bucket_start_) h.add_to_bucket(bucket_, total - bucket_start_);
    h.add_totals(total, sum_ns_);
  }

 private:
  // Samples same_start_..seq-1 were enqueued at last_enqueue_.
  void end_same(uint64_t seq) {
    // Modular arithmetic, as summing (now - enqueue) one by one would be.
    sum_ns_ += (seq - same_start_) * (now_ - last_enqueue_);
    same_start_ = seq;
  }

  void switch_enqueue(LatencyHistogram& h, uint64_t enqueue_ns, uint64_t seq) {
    end_same(seq);
    last_enqueue_ = enqueue_ns;
    const unsigned b = LatencyHistogram::bucket_of(now_ - enqueue_ns);
    if (b == bucket_) return;
    if (seq != bucket_start_) h.add_to_bucket(bucket_, seq - bucket_start_);
    bucket_ = b;
    bucket_start_ = seq;
  }

  uint64_t now_;
  uint64_t last_enqueue_;  // of samples same_start_..
  unsigned bucket_;        // of samples bucket_start_..
  uint64_t same_start_ = 0;
  uint64_t bucket_start_ = 0;
  uint64_t sum_ns_ = 0;  // of samples before same_start_
};

}  // namespace sluice
