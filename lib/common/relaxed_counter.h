#pragma once
// A counter with exactly one writer (the lcore that owns it) and any number of
// readers (the metrics scraper). Relaxed loads and stores compile to plain
// moves on x86, so the data path pays nothing, yet a concurrent scrape is not a
// data race.

#include <atomic>
#include <cstdint>

namespace sluice {

class RelaxedCounter {
 public:
  void add(uint64_t n = 1) { set(get() + n); }
  void sub(uint64_t n = 1) { set(get() - n); }
  void set(uint64_t v) { value_.store(v, std::memory_order_relaxed); }
  uint64_t get() const { return value_.load(std::memory_order_relaxed); }

 private:
  std::atomic<uint64_t> value_{0};
};

}  // namespace sluice
