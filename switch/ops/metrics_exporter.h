#pragma once
// Prometheus endpoint. Nothing is counted here: on every scrape the collector
// walks the per-lcore counters and traffic managers and sums them (the same
// numbers the summary prints), so the data path never touches the exporter.

#include <memory>
#include <string>

#include "switch/runtime/runtime.h"

namespace prometheus {
class Exposer;
}

namespace sluice {

class SluiceCollector;

class MetricsExporter {
 public:
  explicit MetricsExporter(const Runtime& rt);
  ~MetricsExporter();
  // Starts serving /metrics on host:port; false (with *error) if it cannot bind.
  bool start(const std::string& address, std::string* error);

 private:
  const Runtime& rt_;
  std::shared_ptr<SluiceCollector> collector_;
  std::unique_ptr<prometheus::Exposer> exposer_;
};

}  // namespace sluice
