#pragma once
// Building Prometheus metric families at scrape time, for the collectors of
// sluice (switch/ops/metrics_exporter.cc) and sluice-allocator
// (allocator/allocator_metrics.cc). Header-only: only those two, which link
// prometheus-cpp, include it; nothing else in lib/ depends on it.

#include <prometheus/client_metric.h>
#include <prometheus/metric_family.h>

#include <utility>
#include <vector>

namespace sluice {

using MetricLabels = std::vector<prometheus::ClientMetric::Label>;

inline prometheus::MetricFamily metric_family(const char* name, const char* help,
                                              prometheus::MetricType type) {
  prometheus::MetricFamily f;
  f.name = name;
  f.help = help;
  f.type = type;
  return f;
}

// One sample of a counter or gauge family.
inline void add_metric_value(prometheus::MetricFamily& f, MetricLabels labels, double v) {
  prometheus::ClientMetric m;
  m.label = std::move(labels);
  if (f.type == prometheus::MetricType::Counter) {
    m.counter.value = v;
  } else {
    m.gauge.value = v;
  }
  f.metric.push_back(std::move(m));
}

}  // namespace sluice
