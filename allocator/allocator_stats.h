#pragma once
// Counters of the Flowtune allocator program, written by its one loop thread
// (relaxed atomics) and read by the Prometheus scrape thread. Nothing here
// allocates or locks. docs/mechanisms/flowtune.md ("The allocator program").

#include <array>
#include <atomic>
#include <cstdint>

#include "lib/mechanisms/flowtune/allocator_core.h"
#include "lib/mechanisms/flowtune/flowtune_wire.h"

namespace sluice::allocator {

// Upper bounds of the iteration-time histogram, in ns; a last +Inf bucket
// follows.
inline constexpr std::array<uint64_t, 14> kIterBucketsNs = {
    1'000,   2'000,   5'000,     10'000,    20'000,    50'000,     100'000,
    200'000, 500'000, 1'000'000, 2'000'000, 5'000'000, 10'000'000, 100'000'000};

struct Stats {
  using Counter = std::atomic<uint64_t>;

  void add(Counter& c, uint64_t n = 1) {
    c.store(c.load(std::memory_order_relaxed) + n, std::memory_order_relaxed);
  }

  Counter datagrams{0};
  // By message type (FLOWLET_START, FLOWLET_END, RATE_UPDATE), indexed type-1.
  std::array<Counter, 3> messages{};
  std::array<Counter, kFlowtuneParseResultCount> malformed{};  // [kOk] unused
  // Flowlet entries, iterations, rates and lease re-sends, flows, hosts and
  // links: the allocator core's own counters.
  flowtune::AllocatorCounters core;
  // Time each iteration took (its count is core.iterations).
  std::array<Counter, kIterBucketsNs.size() + 1> iter_buckets{};
  Counter iter_sum_ns{0};
  // Delay of an iteration past its due time while flows were live (the loop
  // slept past it or was descheduled): how stale the rates got.
  std::array<Counter, kIterBucketsNs.size() + 1> late_buckets{};
  Counter late_sum_ns{0};
  Counter iter_late_max_ns{0};
  Counter updates_sent{0};     // RATE_UPDATE entries sent (threshold crossings + lease re-sends)
  Counter update_messages{0};  // RATE_UPDATE datagrams
  Counter update_bytes{0};     // their bytes including IPv4 + UDP headers (28)
  Counter send_errors{0};      // sendto failed (datagram lost)
  std::atomic<double> iterations_per_second{0};
  std::atomic<double> update_fraction{0};  // update bit/s over allocated capacity, last second

  void record_iteration(uint64_t ns) {
    add(iter_sum_ns, ns);
    add(iter_buckets[bucket_of(ns)]);
  }

  void record_lateness(uint64_t ns) {
    add(late_buckets[bucket_of(ns)]);
    add(late_sum_ns, ns);
    if (ns > iter_late_max_ns.load(std::memory_order_relaxed))
      iter_late_max_ns.store(ns, std::memory_order_relaxed);
  }

  // The 99th percentile of the lateness, as its bucket's upper bound
  // (UINT64_MAX above the last bound; 0 when nothing was recorded).
  uint64_t late_p99_ns() const {
    uint64_t total = 0;
    for (const auto& c : late_buckets) total += c.load(std::memory_order_relaxed);
    if (total == 0) return 0;
    const uint64_t rank = total - total / 100;  // the sample at 99 %, rounded up
    uint64_t seen = 0;
    for (size_t b = 0; b < kIterBucketsNs.size(); ++b) {
      seen += late_buckets[b].load(std::memory_order_relaxed);
      if (seen >= rank) return kIterBucketsNs[b];
    }
    return UINT64_MAX;
  }

  static size_t bucket_of(uint64_t ns) {
    size_t b = 0;
    while (b < kIterBucketsNs.size() && ns > kIterBucketsNs[b]) ++b;
    return b;
  }
};

}  // namespace sluice::allocator
