#include "allocator/allocator_metrics.h"

#include <prometheus/collectable.h>
#include <prometheus/exposer.h>
#include <prometheus/metric_family.h>

#include <exception>

#include "lib/metrics/metric_family.h"

namespace sluice::allocator {
namespace {

using prometheus::ClientMetric;
using prometheus::MetricFamily;
using prometheus::MetricType;
using Labels = MetricLabels;

double get(const std::atomic<uint64_t>& c) { return double(c.load(std::memory_order_relaxed)); }
double get(const RelaxedCounter& c) { return double(c.get()); }

}  // namespace

class AllocatorCollector : public prometheus::Collectable {
 public:
  explicit AllocatorCollector(const Stats& s) : s_(s) {}
  std::vector<MetricFamily> Collect() const override;

 private:
  const Stats& s_;
};

std::vector<MetricFamily> AllocatorCollector::Collect() const {
  std::vector<MetricFamily> out;
  auto gauge = [&](const char* name, const char* help, double v) {
    auto f = metric_family(name, help, MetricType::Gauge);
    add_metric_value(f, {}, v);
    out.push_back(std::move(f));
  };
  auto counter = [&](const char* name, const char* help, const auto& c) {
    auto f = metric_family(name, help, MetricType::Counter);
    add_metric_value(f, {}, get(c));
    out.push_back(std::move(f));
  };
  // A histogram over kIterBucketsNs (and +Inf), in seconds.
  auto histogram = [&](const char* name, const char* help, const auto& buckets,
                       const std::atomic<uint64_t>& sum_ns) {
    auto f = metric_family(name, help, MetricType::Histogram);
    ClientMetric m;
    uint64_t cumulative = 0;
    for (size_t b = 0; b < kIterBucketsNs.size(); ++b) {
      cumulative += buckets[b].load(std::memory_order_relaxed);
      ClientMetric::Bucket bucket;
      bucket.cumulative_count = cumulative;
      bucket.upper_bound = double(kIterBucketsNs[b]) * 1e-9;
      m.histogram.bucket.push_back(bucket);
    }
    cumulative += buckets[kIterBucketsNs.size()].load(std::memory_order_relaxed);
    m.histogram.sample_count = cumulative;
    m.histogram.sample_sum = get(sum_ns) * 1e-9;
    f.metric.push_back(std::move(m));
    out.push_back(std::move(f));
  };
  gauge("sluice_allocator_flows", "Live flows (FLOWLET_START received, no FLOWLET_END yet).",
        get(s_.core.flows));
  gauge("sluice_allocator_hosts", "Host addresses seen (each gives an up and a down link).",
        get(s_.core.hosts));
  gauge("sluice_allocator_links", "Links allocated.", get(s_.core.links));
  counter("sluice_allocator_iterations_total", "NED iterations run.", s_.core.iterations);
  gauge("sluice_allocator_iterations_per_second", "NED iterations in the last whole second.",
        s_.iterations_per_second.load(std::memory_order_relaxed));
  histogram("sluice_allocator_iteration_seconds",
            "Time of one iteration: NED step, F-NORM and notice collection (not sending).",
            s_.iter_buckets, s_.iter_sum_ns);
  histogram("sluice_allocator_iteration_lateness_seconds",
            "Delay of an iteration past its due time while flows were live.", s_.late_buckets,
            s_.late_sum_ns);
  counter("sluice_allocator_updates_sent_total",
          "RATE_UPDATE entries sent (threshold crossings and lease re-sends).", s_.updates_sent);
  counter("sluice_allocator_lease_resends_total",
          "RATE_UPDATE entries re-sent because the lease was about to expire.",
          s_.core.lease_resends);
  counter("sluice_allocator_update_messages_total", "RATE_UPDATE datagrams sent.",
          s_.update_messages);
  counter("sluice_allocator_update_bytes_total",
          "Bytes of RATE_UPDATE datagrams sent, IPv4 and UDP headers (28) included.",
          s_.update_bytes);
  gauge("sluice_allocator_update_capacity_fraction",
        "RATE_UPDATE bit/s over the last second divided by the capacity allocated"
        " (hosts seen x host rate).",
        s_.update_fraction.load(std::memory_order_relaxed));
  counter("sluice_allocator_send_errors_total", "RATE_UPDATE datagrams the socket refused.",
          s_.send_errors);
  counter("sluice_allocator_datagrams_received_total", "UDP datagrams received.", s_.datagrams);
  {
    auto f = metric_family("sluice_allocator_messages_received_total",
                           "Well-formed messages received, by type.", MetricType::Counter);
    const char* names[3] = {"flowlet_start", "flowlet_end", "rate_update"};
    for (unsigned i = 0; i < 3; ++i) add_metric_value(f, {{"type", names[i]}}, get(s_.messages[i]));
    out.push_back(std::move(f));
  }
  {
    auto f = metric_family("sluice_allocator_malformed_total",
                           "Datagrams dropped because parse_flowtune refused them, by reason.",
                           MetricType::Counter);
    for (unsigned r = 1; r < kFlowtuneParseResultCount; ++r) {
      add_metric_value(
          f,
          {{"reason",
            std::string(flowtune_parse_result_name(static_cast<FlowtuneParseResult>(r)))}},
          get(s_.malformed[r]));
    }
    out.push_back(std::move(f));
  }
  {
    auto f = metric_family("sluice_allocator_flowlet_entries_total",
                           "FLOWLET_START / FLOWLET_END entries, by outcome.", MetricType::Counter);
    add_metric_value(f, {{"type", "flowlet_start"}, {"outcome", "added"}}, get(s_.core.starts));
    add_metric_value(f, {{"type", "flowlet_start"}, {"outcome", "duplicate"}},
                     get(s_.core.start_duplicate));
    add_metric_value(f, {{"type", "flowlet_start"}, {"outcome", "refused"}},
                     get(s_.core.start_refused));
    add_metric_value(f, {{"type", "flowlet_end"}, {"outcome", "removed"}}, get(s_.core.ends));
    add_metric_value(f, {{"type", "flowlet_end"}, {"outcome", "unknown"}},
                     get(s_.core.end_unknown));
    out.push_back(std::move(f));
  }
  return out;
}

AllocatorMetrics::AllocatorMetrics(const Stats& stats)
    : collector_(std::make_shared<AllocatorCollector>(stats)) {}

AllocatorMetrics::~AllocatorMetrics() = default;

bool AllocatorMetrics::start(const std::string& address, std::string* error) {
  try {
    exposer_ = std::make_unique<prometheus::Exposer>(address, 1);
    exposer_->RegisterCollectable(collector_);
  } catch (const std::exception& e) {
    *error = e.what();
    return false;
  }
  return true;
}

}  // namespace sluice::allocator
