#pragma once
// Counters of the Flowtune allocator program, written by its one loop thread
// (relaxed atomics) and read by the Prometheus scrape thread. Nothing here
// allocates or locks. docs/mechanisms/flowtune.md ("The allocator program").

#include <array>
#include <atomic>
#include <cstdint>

#include "lib/flowtune/flowtune_wire.h"

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
  Counter starts{0};           // FLOWLET_START entries that added a flow
  Counter start_duplicate{0};  // FLOWLET_START for a flow already live
  Counter start_refused{0};    // table (flows or hosts) full
  Counter ends{0};             // FLOWLET_END entries that removed a flow
  Counter end_unknown{0};      // FLOWLET_END for no live flow
  Counter iterations{0};
  std::array<Counter, kIterBucketsNs.size() + 1> iter_buckets{};
  Counter iter_sum_ns{0};
  Counter updates_sent{0};     // RATE_UPDATE entries (threshold crossings + lease re-sends)
  Counter lease_resends{0};    // of which lease re-sends
  Counter update_messages{0};  // RATE_UPDATE datagrams
  Counter update_bytes{0};     // their bytes including IPv4 + UDP headers (28)
  Counter send_errors{0};      // sendto failed (datagram lost)
  std::atomic<uint32_t> flows{0};
  std::atomic<uint32_t> hosts{0};
  std::atomic<uint32_t> links{0};
  std::atomic<double> iterations_per_second{0};
  std::atomic<double> update_fraction{0};  // update bit/s over allocated capacity, last second

  void record_iteration(uint64_t ns) {
    add(iterations);
    add(iter_sum_ns, ns);
    size_t b = 0;
    while (b < kIterBucketsNs.size() && ns > kIterBucketsNs[b]) ++b;
    add(iter_buckets[b]);
  }
};

}  // namespace sluice::allocator
