#pragma once
// What a module adds to the operator's views (switch/path/module.h): its
// metric families on a scrape, its fields in the summary JSON, its lines in
// the printed summary and its fields in the /sluice/port telemetry reply.
// The exporter, the report and telemetry call the modules' hooks in the
// registry's order and know none of them by name.

#include <prometheus/client_metric.h>
#include <prometheus/metric_family.h>
#include <rte_telemetry.h>

#include <cstdint>
#include <string>
#include <vector>

#include "lib/metrics/metric_family.h"
#include "lib/tm/latency_histogram.h"
#include "switch/runtime/runtime.h"

namespace sluice {

using MetricFamilies = std::vector<prometheus::MetricFamily>;

// {switch, port} labels of a global port.
MetricLabels port_labels(const Runtime& rt, uint16_t p);
// A latency histogram as a Prometheus histogram sample (seconds).
prometheus::ClientMetric histogram_metric(const LatencyHistogram& h, MetricLabels labels);
// A module's control frames sent and received on a port, one sample per
// frame type (label "type").
void add_frames_by_type(prometheus::MetricFamily& sent, prometheus::MetricFamily& recv,
                        const MetricLabels& l, const char* const (&types)[3],
                        const uint64_t (&sent_n)[3], const uint64_t (&recv_n)[3]);

// The members of a JSON object being written: each call appends
// `, "key": value` (the object's first member is written by its owner).
class JsonFields {
 public:
  explicit JsonFields(std::string& out) : out_(out) {}
  void operator()(const char* key, uint64_t v) {
    out_ += std::string(", \"") + key + "\": " + std::to_string(v);
  }
  void operator()(const std::string& key, uint64_t v) { (*this)(key.c_str(), v); }
  // A member whose value is JSON text already (an object, a list).
  void raw(const char* key, const std::string& json) {
    out_ += std::string(", \"") + key + "\": " + json;
  }

 private:
  std::string& out_;
};

// A JSON object of `"key": unsigned` members, built by a module.
class JsonObject {
 public:
  void operator()(const char* key, uint64_t v) {
    text_ += std::string(text_.empty() ? "\"" : ", \"") + key + "\": " + std::to_string(v);
  }
  void raw(const char* key, const std::string& json) {
    text_ += std::string(text_.empty() ? "\"" : ", \"") + key + "\": " + json;
  }
  std::string str() const { return "{" + text_ + "}"; }

 private:
  std::string text_;
};

}  // namespace sluice
