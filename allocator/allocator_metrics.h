#pragma once
// Prometheus endpoint of sluice-allocator: on every scrape the collector
// reads the loop's relaxed atomic counters (allocator_stats.h), so the loop
// never waits for a scrape.

#include <memory>
#include <string>

#include "allocator/allocator_stats.h"

namespace prometheus {
class Exposer;
}

namespace sluice::allocator {

class AllocatorCollector;

class AllocatorMetrics {
 public:
  explicit AllocatorMetrics(const Stats& stats);
  ~AllocatorMetrics();
  // Serves /metrics on host:port; false (with *error) if it cannot bind.
  bool start(const std::string& address, std::string* error);

 private:
  std::shared_ptr<AllocatorCollector> collector_;
  std::unique_ptr<prometheus::Exposer> exposer_;
};

}  // namespace sluice::allocator
