#include "switch/ops/metrics_exporter.h"

#include <prometheus/collectable.h>
#include <prometheus/exposer.h>
#include <prometheus/metric_family.h>
#include <rte_cycles.h>
#include <rte_mempool.h>

#include <bit>
#include <mutex>

#include "lib/metrics/metric_family.h"
#include "switch/mechanisms/registry.h"
#include "switch/ops/module_reports.h"

namespace sluice {
namespace {

using prometheus::ClientMetric;
using prometheus::MetricFamily;
using prometheus::MetricType;
using Labels = MetricLabels;

}  // namespace

MetricLabels port_labels(const Runtime& rt, uint16_t p) {
  return {{"switch", rt.switch_label(p)}, {"port", rt.port_label(p)}};
}

// A mechanism's control frames sent and received on a port, one series per
// frame type.
void add_frames_by_type(MetricFamily& sent, MetricFamily& recv, const Labels& l,
                        const char* const (&types)[3], const uint64_t (&sent_n)[3],
                        const uint64_t (&recv_n)[3]) {
  for (unsigned i = 0; i < 3; ++i) {
    Labels lt = l;
    lt.push_back({"type", types[i]});
    add_metric_value(sent, lt, double(sent_n[i]));
    add_metric_value(recv, lt, double(recv_n[i]));
  }
}

ClientMetric histogram_metric(const LatencyHistogram& h, Labels labels) {
  ClientMetric m;
  m.label = std::move(labels);
  uint64_t cumulative = 0;
  for (unsigned b = 0; b < h.bucket_count(); ++b) {
    cumulative += h.count(b);
    if (h.upper_bound_ns(b) == UINT64_MAX) continue;  // the serializer adds +Inf
    ClientMetric::Bucket bucket;
    bucket.cumulative_count = cumulative;
    bucket.upper_bound = h.upper_bound_ns(b) / 1e9;
    m.histogram.bucket.push_back(bucket);
  }
  m.histogram.sample_count = cumulative;
  m.histogram.sample_sum = h.sum_ns() * 1e-9;
  return m;
}

class SluiceCollector : public prometheus::Collectable {
 public:
  explicit SluiceCollector(const Runtime& rt)
      : rt_(rt), prev_busy_(rt.workers.size()), prev_total_(rt.workers.size()) {}
  std::vector<MetricFamily> Collect() const override;

 private:
  void collect_ports(std::vector<MetricFamily>& out) const;
  void collect_queues(std::vector<MetricFamily>& out) const;
  void collect_buffers(std::vector<MetricFamily>& out) const;
  void collect_lcores(std::vector<MetricFamily>& out) const;
  void collect_fidelity(std::vector<MetricFamily>& out) const;
  void collect_mbuf_pools(std::vector<MetricFamily>& out) const;
  Labels port_labels(uint16_t p) const { return sluice::port_labels(rt_, p); }

  const Runtime& rt_;
  mutable std::mutex mu_;  // scrapes may come from several civetweb threads
  mutable std::vector<uint64_t> prev_busy_, prev_total_;
};

std::vector<MetricFamily> SluiceCollector::Collect() const {
  std::lock_guard<std::mutex> lock(mu_);
  std::vector<MetricFamily> out;
  collect_ports(out);
  collect_queues(out);
  collect_buffers(out);
  collect_lcores(out);
  collect_fidelity(out);
  Modules::each_type([&]<class M>() {
    if constexpr (requires { M::collect(rt_, out); }) M::collect(rt_, out);
  });
  collect_mbuf_pools(out);
  MetricFamily up = metric_family("sluice_uptime_seconds", "Seconds since the data path started.",
                                  MetricType::Gauge);
  const uint64_t now_ns = TscClock(rt_.tsc_hz).now_ns();
  add_metric_value(up, {}, (now_ns - rt_.start_ns) * 1e-9);
  out.push_back(std::move(up));
  return out;
}

// rte_mempool_in_use_count walks every lcore's cache: fine on a scrape, never
// on the data path. Objects in lcore caches count as free.
void SluiceCollector::collect_mbuf_pools(std::vector<MetricFamily>& out) const {
  auto size = metric_family(
      "sluice_mbuf_pool_size",
      "mbufs in the pool (the 'mbufs' setting; in fabric time, of the pools made so far).",
      MetricType::Gauge);
  auto in_use = metric_family("sluice_mbuf_pool_in_use",
                              "mbufs of the pool held anywhere: queues, rings, NICs, links.",
                              MetricType::Gauge);
  for (size_t socket = 0; socket < rt_.mbuf_supplies.size(); ++socket) {
    const MbufSupply* supply = rt_.mbuf_supplies[socket].get();
    if (supply == nullptr) continue;
    const MetricLabels labels = {{"socket", std::to_string(socket)}};
    add_metric_value(size, labels, double(supply->size()));
    add_metric_value(in_use, labels, double(supply->in_use()));
  }
  out.push_back(std::move(size));
  out.push_back(std::move(in_use));
}

void SluiceCollector::collect_ports(std::vector<MetricFamily>& out) const {
  auto rx_p =
      metric_family("sluice_port_rx_packets_total", "Frames received.", MetricType::Counter);
  auto rx_b = metric_family("sluice_port_rx_bytes_total", "Bytes received (frame length).",
                            MetricType::Counter);
  auto tx_p =
      metric_family("sluice_port_tx_packets_total", "Frames transmitted.", MetricType::Counter);
  auto tx_b = metric_family("sluice_port_tx_bytes_total", "Bytes transmitted (frame length).",
                            MetricType::Counter);
  auto gen =
      metric_family("sluice_port_generated_packets_total",
                    "Frames built and sent by sluice itself (ARP, control).", MetricType::Counter);
  auto con = metric_family("sluice_port_consumed_packets_total",
                           "Frames received and used by sluice, not forwarded (ARP, control).",
                           MetricType::Counter);
  auto drops =
      metric_family("sluice_port_drops_total", "Frames dropped, by reason.", MetricType::Counter);
  auto marks = metric_family("sluice_port_ecn_marks_total", "Packets marked CE at enqueue.",
                             MetricType::Counter);
  auto ctrl_drop =
      metric_family("sluice_port_control_dropped_total",
                    "Frames sluice built (ARP, PFC) and could not queue: control queue full.",
                    MetricType::Counter);
  auto lost =
      metric_family("sluice_link_lost_packets_total",
                    "Frames transmitted onto an internal link and lost there (configured loss).",
                    MetricType::Counter);
  for (const auto& p : rt_.ports) {
    const PortTotals t = rt_.port_totals(p->index);
    const Labels l = port_labels(p->index);
    add_metric_value(rx_p, l, double(t.rx_packets));
    add_metric_value(rx_b, l, double(t.rx_bytes));
    add_metric_value(tx_p, l, double(t.tx_packets));
    add_metric_value(tx_b, l, double(t.tx_bytes));
    add_metric_value(gen, l, double(t.tx_generated_packets));
    add_metric_value(con, l, double(t.rx_consumed_packets));
    add_metric_value(marks, l, double(t.ecn_marks));
    add_metric_value(ctrl_drop, l, double(p->tm->control_dropped.get()));
    if (p->kind == PortKind::kLink) add_metric_value(lost, l, double(t.link_lost));
    for (unsigned r = 0; r < kDropReasonCount; ++r) {
      Labels dl = l;
      dl.push_back({"reason", std::string(drop_reason_name(static_cast<DropReason>(r)))});
      add_metric_value(drops, std::move(dl), double(t.drops[r]));
    }
  }
  for (auto* f : {&rx_p, &rx_b, &tx_p, &tx_b, &gen, &con, &drops, &marks, &ctrl_drop, &lost})
    out.push_back(std::move(*f));
}

void SluiceCollector::collect_queues(std::vector<MetricFamily>& out) const {
  auto depth = metric_family("sluice_queue_depth_bytes", "Bytes waiting in a data queue.",
                             MetricType::Gauge);
  auto ctrl = metric_family("sluice_port_queued_bytes", "Bytes waiting in all queues of a port.",
                            MetricType::Gauge);
  auto res =
      metric_family("sluice_queue_residence_seconds",
                    "Time from enqueue to dequeue in the traffic manager.", MetricType::Histogram);
  // Ports that queue by flow (SFQ, FQ) only.
  auto flow_active = metric_family("sluice_flow_queues_active",
                                   "Flow queues (SFQ, FQ) holding packets now.", MetricType::Gauge);
  auto flow_collisions =
      metric_family("sluice_sfq_collisions_total",
                    "Packets whose SFQ queue held another flow's packets when they arrived.",
                    MetricType::Counter);
  auto codel_drops =
      metric_family("sluice_codel_drops_total", "Packets CoDel dropped as they left their queue.",
                    MetricType::Counter);
  auto codel_marks =
      metric_family("sluice_codel_marks_total", "Packets CoDel marked CE instead of dropping them.",
                    MetricType::Counter);
  // What each data queue took, sent, marked and refused (EgressPort's
  // QueueStats). A packet that cut through its idle queue counts as taken
  // and sent at once.
  auto enq_p =
      metric_family("sluice_queue_enqueued_packets_total",
                    "Packets a data queue took (cut-through included).", MetricType::Counter);
  auto enq_b =
      metric_family("sluice_queue_enqueued_bytes_total",
                    "Bytes a data queue took (frame length, no FCS).", MetricType::Counter);
  auto deq_p = metric_family("sluice_queue_dequeued_packets_total",
                             "Packets a data queue sent to its port (cut-through included).",
                             MetricType::Counter);
  auto deq_b = metric_family("sluice_queue_dequeued_bytes_total",
                             "Bytes a data queue sent to its port (frame length, no FCS).",
                             MetricType::Counter);
  auto q_marks = metric_family("sluice_queue_ecn_marks_total",
                               "Packets marked CE as a data queue took them.", MetricType::Counter);
  auto refused = metric_family("sluice_queue_refused_total",
                               "Packets a data queue refused, or dropped as they left (CoDel) or "
                               "evicted (pFabric), by reason.",
                               MetricType::Counter);
  for (const auto& p : rt_.ports) {
    const EgressPort& tm = *p->tm;
    // The reasons the traffic manager counts per queue on this port.
    std::vector<DropReason> reasons = {DropReason::kBufferFull, DropReason::kQueueThreshold,
                                       DropReason::kQueueFull};
    if (tm.flow_queues() != nullptr) reasons.push_back(DropReason::kCodel);
    if (tm.ranked()) reasons.push_back(DropReason::kPriorityDrop);
    for (uint16_t q = 0; q < tm.num_queues(); ++q) {
      Labels l = port_labels(p->index);
      l.push_back({"queue", std::to_string(q)});
      add_metric_value(depth, l, double(tm.depth_bytes(q)));
      const QueueStats& st = tm.queue_stats(q);
      add_metric_value(enq_p, l, double(st.enqueued_packets.get()));
      add_metric_value(enq_b, l, double(st.enqueued_bytes.get()));
      add_metric_value(deq_p, l, double(st.dequeued_packets.get()));
      add_metric_value(deq_b, l, double(st.dequeued_bytes.get()));
      add_metric_value(q_marks, l, double(st.ecn_marks.get()));
      for (DropReason r : reasons) {
        Labels rl = l;
        rl.push_back({"reason", std::string(drop_reason_name(r))});
        add_metric_value(refused, std::move(rl), double(st.drops[static_cast<unsigned>(r)].get()));
      }
    }
    add_metric_value(ctrl, port_labels(p->index), double(tm.queued_bytes()));
    res.metric.push_back(histogram_metric(tm.residence(), port_labels(p->index)));
    if (const FlowQueues* fq = tm.flow_queues()) {
      const Labels l = port_labels(p->index);
      add_metric_value(flow_active, l, double(fq->active_queues()));
      add_metric_value(flow_collisions, l, double(fq->collisions()));
      add_metric_value(codel_drops, l, double(fq->codel_drops()));
      add_metric_value(codel_marks, l, double(fq->codel_marks()));
    }
  }
  out.push_back(std::move(depth));
  for (auto* f : {&enq_p, &enq_b, &deq_p, &deq_b, &q_marks, &refused}) out.push_back(std::move(*f));
  out.push_back(std::move(ctrl));
  out.push_back(std::move(res));
  for (auto* f : {&flow_active, &flow_collisions, &codel_drops, &codel_marks})
    if (!f->metric.empty()) out.push_back(std::move(*f));
}

void SluiceCollector::collect_fidelity(std::vector<MetricFamily>& out) const {
  auto shaper =
      metric_family("sluice_shaper_lateness_seconds",
                    "How late frames left a shaped port against the time its shaper allowed "
                    "(first frame of each dequeue burst).",
                    MetricType::Histogram);
  auto link =
      metric_family("sluice_link_lateness_seconds",
                    "How late internal-link frames were handed to the receiving port against "
                    "their due time.",
                    MetricType::Histogram);
  auto lost =
      metric_family("sluice_shaper_lost_seconds_total",
                    "Transmit time a shaped port lost while frames waited, because the loop "
                    "came back later than its token bucket could cover.",
                    MetricType::Counter);
  auto oversize =
      metric_family("sluice_replay_oversize_skipped_total",
                    "Frames of a capture port's rx file left out of the replay: larger than "
                    "the mbuf data room (mbuf_size).",
                    MetricType::Counter);
  for (const auto& p : rt_.ports) {
    add_metric_value(lost, port_labels(p->index), p->tm->shaper_lost_ns() * 1e-9);
    shaper.metric.push_back(histogram_metric(p->shaper_lateness, port_labels(p->index)));
    if (p->kind == PortKind::kLink)
      link.metric.push_back(histogram_metric(*p->link_lateness, port_labels(p->index)));
    if (p->pcap && p->pcap->has_rx())
      add_metric_value(oversize, port_labels(p->index), double(p->pcap->oversize_skipped()));
  }
  out.push_back(std::move(lost));
  out.push_back(std::move(shaper));
  out.push_back(std::move(link));
  out.push_back(std::move(oversize));
}

void SluiceCollector::collect_buffers(std::vector<MetricFamily>& out) const {
  auto used = metric_family("sluice_buffer_occupancy_bytes",
                            "Bytes held in the switch's shared buffer.", MetricType::Gauge);
  auto cap = metric_family("sluice_buffer_capacity_bytes", "Size of the switch's shared buffer.",
                           MetricType::Gauge);
  for (const SwitchRuntime& sw : rt_.switches) {
    uint64_t u = 0, c = 0;
    for (const auto& w : rt_.workers) {
      const SharedBuffer* b = w->buffers[sw.index].get();
      if (b == nullptr) continue;
      u += b->used();
      c += b->capacity();
    }
    add_metric_value(used, {{"switch", sw.cfg->name}}, double(u));
    add_metric_value(cap, {{"switch", sw.cfg->name}}, double(c));
  }
  out.push_back(std::move(used));
  out.push_back(std::move(cap));
}

// Busy ratio since the previous scrape (since start on the first).
void SluiceCollector::collect_lcores(std::vector<MetricFamily>& out) const {
  auto busy = metric_family("sluice_lcore_busy_ratio",
                            "Share of loop time spent on iterations that moved packets, since the "
                            "previous scrape.",
                            MetricType::Gauge);
  for (const auto& w : rt_.workers) {
    const uint64_t b = w->busy_cycles.get(), t = w->total_cycles.get();
    const uint64_t db = b - prev_busy_[w->slot], dt = t - prev_total_[w->slot];
    prev_busy_[w->slot] = b;
    prev_total_[w->slot] = t;
    add_metric_value(busy, {{"lcore", std::to_string(w->lcore)}}, dt == 0 ? 0.0 : double(db) / dt);
  }
  out.push_back(std::move(busy));
}

MetricsExporter::MetricsExporter(const Runtime& rt) : rt_(rt) {}
MetricsExporter::~MetricsExporter() = default;

bool MetricsExporter::start(const std::string& address, std::string* error) {
  try {
    exposer_ = std::make_unique<prometheus::Exposer>(address, 1);
  } catch (const std::exception& e) {
    *error = "cannot serve metrics on " + address + ": " + e.what();
    return false;
  }
  collector_ = std::make_shared<SluiceCollector>(rt_);
  exposer_->RegisterCollectable(collector_);
  return true;
}

}  // namespace sluice
