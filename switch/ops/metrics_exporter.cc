#include "switch/ops/metrics_exporter.h"

#include <prometheus/collectable.h>
#include <prometheus/exposer.h>
#include <prometheus/metric_family.h>
#include <rte_cycles.h>
#include <rte_mempool.h>

#include <bit>
#include <mutex>

#include "lib/metrics/metric_family.h"
#include "switch/mechanisms/bfc/bfc_builder.h"
#include "switch/mechanisms/dibs/dibs_builder.h"
#include "switch/mechanisms/floodgate/floodgate_builder.h"
#include "switch/mechanisms/flowtune/flowtune_builder.h"

namespace sluice {
namespace {

using prometheus::ClientMetric;
using prometheus::MetricFamily;
using prometheus::MetricType;
using Labels = MetricLabels;

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

}  // namespace

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
  void collect_pfc(std::vector<MetricFamily>& out) const;
  void collect_bfc_ports(std::vector<MetricFamily>& out) const;
  void collect_bfc_switches(std::vector<MetricFamily>& out) const;
  void collect_floodgate_ports(std::vector<MetricFamily>& out) const;
  void collect_floodgate_switches(std::vector<MetricFamily>& out) const;
  void collect_tcd(std::vector<MetricFamily>& out) const;
  void collect_dibs(std::vector<MetricFamily>& out) const;
  void collect_flowtune(std::vector<MetricFamily>& out) const;
  void collect_flowtune_allocator(std::vector<MetricFamily>& out) const;
  void collect_mbuf_pools(std::vector<MetricFamily>& out) const;
  Labels port_labels(uint16_t p) const {
    return {{"switch", rt_.switch_label(p)}, {"port", rt_.port_label(p)}};
  }

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
  collect_pfc(out);
  collect_bfc_ports(out);
  collect_bfc_switches(out);
  collect_floodgate_ports(out);
  collect_floodgate_switches(out);
  collect_tcd(out);
  collect_dibs(out);
  collect_flowtune(out);
  collect_flowtune_allocator(out);
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
  auto size = metric_family("sluice_mbuf_pool_size", "mbufs in the pool (the 'mbufs' setting).",
                            MetricType::Gauge);
  auto in_use = metric_family("sluice_mbuf_pool_in_use",
                              "mbufs of the pool held anywhere: queues, rings, NICs, links.",
                              MetricType::Gauge);
  for (size_t socket = 0; socket < rt_.pools.size(); ++socket) {
    const rte_mempool* pool = rt_.pools[socket];
    if (pool == nullptr) continue;
    const MetricLabels labels = {{"socket", std::to_string(socket)}};
    add_metric_value(size, labels, pool->size);
    add_metric_value(in_use, labels, rte_mempool_in_use_count(pool));
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
  for (const auto& p : rt_.ports) {
    const EgressPort& tm = *p->tm;
    for (uint16_t q = 0; q < tm.num_queues(); ++q) {
      Labels l = port_labels(p->index);
      l.push_back({"queue", std::to_string(q)});
      add_metric_value(depth, std::move(l), double(tm.queue_bytes(q)));
    }
    add_metric_value(ctrl, port_labels(p->index), double(tm.queued_bytes()));
    res.metric.push_back(histogram_metric(tm.residence(), port_labels(p->index)));
  }
  out.push_back(std::move(depth));
  out.push_back(std::move(ctrl));
  out.push_back(std::move(res));
}

void SluiceCollector::collect_pfc(std::vector<MetricFamily>& out) const {
  auto sent =
      metric_family("sluice_pfc_frames_sent_total",
                    "PFC/PAUSE frames sent that carried this priority (XOFF, XON or refresh).",
                    MetricType::Counter);
  auto xoff = metric_family("sluice_pfc_xoff_total", "XON to XOFF transitions toward the peer.",
                            MetricType::Counter);
  auto recv =
      metric_family("sluice_pfc_frames_received_total",
                    "PFC/PAUSE frames received that acted on this priority.", MetricType::Counter);
  auto paused =
      metric_family("sluice_pfc_paused_seconds_total",
                    "Time this port was paused by its peer, per priority.", MetricType::Counter);
  auto bad = metric_family("sluice_pfc_invalid_frames_total",
                           "MAC control frames with a short body or an unknown opcode.",
                           MetricType::Counter);
  for (const auto& p : rt_.ports) {
    if (!p->pfc_ingress) continue;
    const PfcTxStats& tx = p->pfc_ingress->stats();
    const PfcRxStats& rx = p->pfc_reaction->stats();
    for (uint32_t slot = 0; slot < kPfcSlots; ++slot) {
      Labels l = port_labels(p->index);
      l.push_back({"priority", slot == kAllPriorities ? "all" : std::to_string(slot)});
      add_metric_value(sent, l, double(tx.sent[slot].get()));
      add_metric_value(xoff, l, double(tx.xoff[slot].get()));
      add_metric_value(recv, l, double(rx.received[slot].get()));
      add_metric_value(paused, l, rx.paused_ns[slot].get() * 1e-9);
    }
    add_metric_value(bad, port_labels(p->index), double(rx.invalid.get()));
  }
  for (auto* f : {&sent, &xoff, &recv, &paused, &bad}) out.push_back(std::move(*f));
}

// Flowtune per edge switch (docs/mechanisms/flowtune.md); the pacer's drops
// are port drops (sluice_port_drops_total, reason pacer_full).
void SluiceCollector::collect_flowtune(std::vector<MetricFamily>& out) const {
  struct Item {
    const char* name;
    const char* help;
    MetricType type;
    uint64_t FlowtuneTotals::*value;
  };
  static const Item kItems[] = {
      {"sluice_flowtune_flowlets_started_total", "Flowlets that started (FLOWLET_START).",
       MetricType::Counter, &FlowtuneTotals::flowlets_started},
      {"sluice_flowtune_flowlets_ended_total", "Flowlets that ended after the idle gap.",
       MetricType::Counter, &FlowtuneTotals::flowlets_ended},
      {"sluice_flowtune_active_flowlets", "Flowlets the edge tracks now.", MetricType::Gauge,
       &FlowtuneTotals::active_flowlets},
      {"sluice_flowtune_untracked_packets_total",
       "Packets forwarded unpaced and unreported: the flowlet table's bucket was full.",
       MetricType::Counter, &FlowtuneTotals::table_full},
      {"sluice_flowtune_paced_packets_total", "Packets within their flow's rate, sent at once.",
       MetricType::Counter, &FlowtuneTotals::paced},
      {"sluice_flowtune_held_packets_total", "Packets the pacer held until their time.",
       MetricType::Counter, &FlowtuneTotals::held},
      {"sluice_flowtune_unpaced_packets_total", "Packets of flows with no fresh rate.",
       MetricType::Counter, &FlowtuneTotals::unpaced},
      {"sluice_flowtune_flushed_packets_total",
       "Held packets sent at once: their flow's lease ran out.", MetricType::Counter,
       &FlowtuneTotals::flushed},
      {"sluice_flowtune_ecn_marks_total", "Held packets marked CE above the pacer's threshold.",
       MetricType::Counter, &FlowtuneTotals::marked},
      {"sluice_flowtune_pacer_queue_packets", "Packets the pacer holds now.", MetricType::Gauge,
       &FlowtuneTotals::held_now},
      {"sluice_flowtune_datagrams_sent_total", "FLOWLET_START/END datagrams sent.",
       MetricType::Counter, &FlowtuneTotals::datagrams_sent},
      {"sluice_flowtune_send_errors_total", "Datagrams to the allocator the kernel refused.",
       MetricType::Counter, &FlowtuneTotals::send_errors},
      {"sluice_flowtune_events_lost_total",
       "Flowlet events or rates lost: the ring between an lcore and the control thread was full.",
       MetricType::Counter, &FlowtuneTotals::events_lost},
      {"sluice_flowtune_datagrams_received_total", "Datagrams received from the allocator.",
       MetricType::Counter, &FlowtuneTotals::datagrams_received},
      {"sluice_flowtune_rate_updates_total", "RATE_UPDATE entries applied.", MetricType::Counter,
       &FlowtuneTotals::rate_updates},
      {"sluice_flowtune_stale_rate_updates_total",
       "RATE_UPDATE entries for a flowlet that had ended.", MetricType::Counter,
       &FlowtuneTotals::stale_updates},
      {"sluice_flowtune_bad_messages_total",
       "Datagrams from the allocator dropped: malformed, or not a RATE_UPDATE.",
       MetricType::Counter, &FlowtuneTotals::malformed},
  };
  std::vector<MetricFamily> families;
  for (const Item& item : kItems)
    families.push_back(metric_family(item.name, item.help, item.type));
  for (const SwitchRuntime& sw : rt_.switches) {
    if (!sw.cfg->flowtune.enabled) continue;
    FlowtuneTotals t = flowtune_totals(rt_, sw);
    t.malformed += t.unexpected;
    for (size_t i = 0; i < families.size(); ++i)
      add_metric_value(families[i], {{"switch", sw.cfg->name}}, double(t.*kItems[i].value));
  }
  for (auto& f : families) out.push_back(std::move(f));
}

// Flowtune's allocator in the fabric (exact time; docs/mechanisms/
// flowtune.md, "The allocator in the fabric"): the names of sluice-
// allocator's metrics under sluice_flowtune_allocator_.
void SluiceCollector::collect_flowtune_allocator(std::vector<MetricFamily>& out) const {
  if (!rt_.flowtune_allocator) return;
  const flowtune::FabricAllocatorCounters& c = rt_.flowtune_allocator->counters();
  auto one = [&](const char* name, const char* help, MetricType type, uint64_t v) {
    auto f = metric_family(name, help, type);
    add_metric_value(f, {}, double(v));
    out.push_back(std::move(f));
  };
  one("sluice_flowtune_allocator_flows", "Live flows at the allocator in the fabric.",
      MetricType::Gauge, c.core.flows.get());
  one("sluice_flowtune_allocator_hosts", "Host addresses the allocator has seen.",
      MetricType::Gauge, c.core.hosts.get());
  one("sluice_flowtune_allocator_iterations_total", "NED iterations run.", MetricType::Counter,
      c.core.iterations.get());
  one("sluice_flowtune_allocator_updates_sent_total",
      "Rates sent to the edges (threshold crossings and lease re-sends).", MetricType::Counter,
      c.core.updates.get());
  one("sluice_flowtune_allocator_lease_resends_total",
      "Rates re-sent because the lease was about to expire.", MetricType::Counter,
      c.core.lease_resends.get());
  one("sluice_flowtune_allocator_update_messages_total",
      "RATE_UPDATE datagrams the rates would fill (183 entries each, per edge and pass).",
      MetricType::Counter, c.update_messages.get());
  one("sluice_flowtune_allocator_update_bytes_total",
      "Bytes of those datagrams, IPv4 and UDP headers (28) included.", MetricType::Counter,
      c.update_bytes.get());
  auto entries = metric_family("sluice_flowtune_allocator_flowlet_entries_total",
                               "FLOWLET_START / FLOWLET_END entries that reached the allocator, "
                               "by outcome.",
                               MetricType::Counter);
  add_metric_value(entries, {{"type", "flowlet_start"}, {"outcome", "added"}},
                   double(c.core.starts.get()));
  add_metric_value(entries, {{"type", "flowlet_start"}, {"outcome", "duplicate"}},
                   double(c.core.start_duplicate.get()));
  add_metric_value(entries, {{"type", "flowlet_start"}, {"outcome", "refused"}},
                   double(c.core.start_refused.get()));
  add_metric_value(entries, {{"type", "flowlet_end"}, {"outcome", "removed"}},
                   double(c.core.ends.get()));
  add_metric_value(entries, {{"type", "flowlet_end"}, {"outcome", "unknown"}},
                   double(c.core.end_unknown.get()));
  out.push_back(std::move(entries));
  auto lost = metric_family("sluice_flowtune_allocator_lost_total",
                            "Control messages lost because more were in flight than the control "
                            "path holds, by direction.",
                            MetricType::Counter);
  add_metric_value(lost, {{"direction", "to_allocator"}}, double(c.news_lost.get()));
  add_metric_value(lost, {{"direction", "to_edges"}}, double(c.rates_lost.get()));
  out.push_back(std::move(lost));
}

// DIBS per port and per switch (docs/mechanisms/dibs.md); detour drops are
// also port drops (sluice_port_drops_total, reason detour_*).
void SluiceCollector::collect_dibs(std::vector<MetricFamily>& out) const {
  auto detours = metric_family(
      "sluice_dibs_detours_total",
      "Packets detoured into this port's queue instead of dropped elsewhere.", MetricType::Counter);
  auto drops =
      metric_family("sluice_dibs_detour_drops_total",
                    "Refused packets DIBS could not detour, by reason.", MetricType::Counter);
  auto per_packet = metric_family("sluice_dibs_detours_per_packet",
                                  "Detours each packet had taken when it left the fabric here.",
                                  MetricType::Histogram);
  for (const SwitchRuntime& sw : rt_.switches) {
    if (!sw.dibs) continue;
    for (uint16_t p : sw.ports)
      add_metric_value(detours, port_labels(p), double(dibs_port_detours(rt_, p)));
    const DibsSwitchTotals t = dibs_switch_totals(rt_, sw);
    const Labels l = {{"switch", sw.cfg->name}};
    for (unsigned k = 0; k < kDetourDropCount; ++k) {
      Labels lk = l;
      lk.push_back(
          {"reason", std::string(drop_reason_name(drop_reason_of(static_cast<DetourDrop>(k))))});
      add_metric_value(drops, lk, double(t.drops[k]));
    }
    ClientMetric m;
    m.label = l;
    uint64_t cumulative = 0;
    for (unsigned b = 0; b < kDetourBuckets; ++b) {
      cumulative += t.buckets[b];
      if (b + 1 == kDetourBuckets) continue;  // 255: the serializer's +Inf
      ClientMetric::Bucket bucket;
      bucket.cumulative_count = cumulative;
      bucket.upper_bound = kDetourBucketUpper[b];
      m.histogram.bucket.push_back(bucket);
    }
    m.histogram.sample_count = cumulative;
    m.histogram.sample_sum = double(t.exit_detours);
    per_packet.metric.push_back(std::move(m));
  }
  for (auto* f : {&detours, &drops, &per_packet}) out.push_back(std::move(*f));
}

// TCD per egress port, summed over its queues (docs/mechanisms/tcd.md).
void SluiceCollector::collect_tcd(std::vector<MetricFamily>& out) const {
  auto time = metric_family("sluice_tcd_state_seconds_total",
                            "Queue-time in each TCD state, summed over the port's data queues.",
                            MetricType::Counter);
  auto moves = metric_family("sluice_tcd_transitions_total",
                             "TCD state changes of the port's queues.", MetricType::Counter);
  auto pauses = metric_family("sluice_tcd_pauses_total",
                              "ON to OFF transitions of the port's queues.", MetricType::Counter);
  auto marks = metric_family("sluice_tcd_marks_total",
                             "Packets TCD re-marked at departure, by codepoint written (ce, ue).",
                             MetricType::Counter);
  auto on =
      metric_family("sluice_tcd_on_period_seconds",
                    "ON periods of the port's queues (resume to next pause), to check max_T_on.",
                    MetricType::Histogram);
  constexpr TcdState kStates[] = {TcdState::kNonCongestion, TcdState::kCongestion,
                                  TcdState::kUndetermined};
  for (const auto& p : rt_.ports) {
    if (!p->tcd) continue;
    const TcdPort& t = *p->tcd;
    const Labels l = port_labels(p->index);
    for (TcdState s : kStates) {
      Labels ls = l;
      ls.push_back({"state", tcd_state_name(s)});
      add_metric_value(time, ls, t.time_ns(s) * 1e-9);
      for (TcdState to : kStates) {
        if (to == s) continue;
        Labels lt = l;
        lt.push_back({"from", tcd_state_name(s)});
        lt.push_back({"to", tcd_state_name(to)});
        add_metric_value(moves, lt, double(t.transitions(s, to)));
      }
    }
    add_metric_value(pauses, l, double(t.pauses()));
    Labels lc = l, lu = l;
    lc.push_back({"codepoint", "ce"});
    lu.push_back({"codepoint", "ue"});
    add_metric_value(marks, lc, double(t.marker().ce_marks.get()));
    add_metric_value(marks, lu, double(t.marker().ue_marks.get()));
    LatencyHistogram h;
    t.add_on_periods(&h);
    on.metric.push_back(histogram_metric(h, l));
  }
  for (auto* f : {&time, &moves, &pauses, &marks, &on}) out.push_back(std::move(*f));
}

void SluiceCollector::collect_bfc_ports(std::vector<MetricFamily>& out) const {
  auto sent = metric_family("sluice_bfc_frames_sent_total",
                            "BFC frames sent out of this port to its upstream, by type.",
                            MetricType::Counter);
  auto recv = metric_family("sluice_bfc_frames_received_total",
                            "BFC frames from this port's downstream that were applied, by type.",
                            MetricType::Counter);
  auto lost =
      metric_family("sluice_bfc_frames_lost_total",
                    "BFC frames built for this port but not queued (no mbuf, peer MAC unknown, "
                    "control ring full); the next bitmap repairs them.",
                    MetricType::Counter);
  auto held = metric_family("sluice_bfc_paused_upstream_queues",
                            "Upstream queues this switch holds paused through this ingress port.",
                            MetricType::Gauge);
  auto paused =
      metric_family("sluice_bfc_paused_queues",
                    "Data queues of this egress port paused by its downstream.", MetricType::Gauge);
  auto active =
      metric_family("sluice_bfc_active_queues",
                    "Non-empty, non-paused data queues of this egress port (N_active), as of "
                    "its last enqueue.",
                    MetricType::Gauge);
  auto th = metric_family("sluice_bfc_threshold_bytes",
                          "Pause threshold Th of this egress port, as of its last enqueue.",
                          MetricType::Gauge);
  auto repairs = metric_family(
      "sluice_bfc_bitmap_repairs_total",
      "Queue holds a BFC bitmap from this port's downstream changed: a pause or resume frame "
      "that never arrived, by kind (pause, resume).",
      MetricType::Counter);
  auto unknown =
      metric_family("sluice_bfc_bitmap_unknown_queues_total",
                    "BFC bitmaps from this port's downstream that paused queues the port "
                    "lacks; those bits were ignored and the rest applied.",
                    MetricType::Counter);
  for (const auto& p : rt_.ports) {
    if (p->bfc == nullptr) continue;
    const PortTotals t = rt_.port_totals(p->index);
    const Labels l = port_labels(p->index);
    add_frames_by_type(sent, recv, l, kBfcFrameTypes, t.bfc_sent, t.bfc_received);
    add_metric_value(lost, l, double(t.control_lost));
    int holds = 0;
    for (const auto& w : rt_.workers) {
      if (const BfcShard* s = w->bfc[p->switch_index].get())
        holds += std::popcount(s->counters().paused_mask(p->index));
    }
    add_metric_value(held, l, holds);
    add_metric_value(paused, l,
                     p->bfc_upstream ? std::popcount(p->bfc_upstream->paused_mask()) : 0);
    add_metric_value(active, l, double(p->bfc->last_active_queues(p->index)));
    add_metric_value(th, l, double(p->bfc->last_threshold(p->index)));
    if (p->bfc_upstream == nullptr) continue;
    const UpstreamPauseState& u = *p->bfc_upstream;
    add_metric_value(unknown, l, double(u.unknown_queue_bitmaps.get()));
    Labels kind = l;
    kind.push_back({"kind", "pause"});
    add_metric_value(repairs, kind, double(u.bitmap_repaired_pauses.get()));
    kind.back().value = "resume";
    add_metric_value(repairs, kind, double(u.bitmap_repaired_resumes.get()));
  }
  for (auto* f : {&sent, &recv, &lost, &held, &paused, &active, &th, &unknown, &repairs})
    out.push_back(std::move(*f));
}

void SluiceCollector::collect_bfc_switches(std::vector<MetricFamily>& out) const {
  auto entries = metric_family("sluice_bfc_flow_table_entries", "Size of the BFC flow table.",
                               MetricType::Gauge);
  auto occupied =
      metric_family("sluice_bfc_flow_table_occupied",
                    "Flow-table entries with packets in the switch.", MetricType::Gauge);
  auto index_coll =
      metric_family("sluice_bfc_flow_table_collisions_total",
                    "Flows that found their flow-table entry held by another flow with "
                    "packets in the switch.",
                    MetricType::Counter);
  auto queue_coll = metric_family(
      "sluice_bfc_queue_collisions_total",
      "Dynamic assignments that found no empty queue and took a random one.", MetricType::Counter);
  for (const SwitchRuntime& sw : rt_.switches) {
    if (!sw.bfc_on) continue;
    const BfcSwitchTotals t = bfc_switch_totals(rt_, sw);
    const Labels l = {{"switch", sw.cfg->name}};
    add_metric_value(entries, l, double(t.flow_table_entries));
    add_metric_value(occupied, l, double(t.flow_table_occupied));
    add_metric_value(index_coll, l, double(t.index_collisions));
    add_metric_value(queue_coll, l, double(t.queue_collisions));
  }
  for (auto* f : {&entries, &occupied, &index_coll, &queue_coll}) out.push_back(std::move(*f));
}

void SluiceCollector::collect_floodgate_ports(std::vector<MetricFamily>& out) const {
  auto sent =
      metric_family("sluice_floodgate_frames_sent_total",
                    "Floodgate frames sent out of this port (credit to the upstream, sync to "
                    "the downstream, dstPause to a host), by type.",
                    MetricType::Counter);
  auto recv = metric_family("sluice_floodgate_frames_received_total",
                            "Floodgate frames received on this port and applied (credit from the "
                            "downstream, sync from the upstream), by type.",
                            MetricType::Counter);
  auto credit_sent = metric_family(
      "sluice_floodgate_credit_sent_bytes_total",
      "Credit (data bytes) this port's FG_CREDIT frames returned upstream.", MetricType::Counter);
  auto credit_recv = metric_family("sluice_floodgate_credit_received_bytes_total",
                                   "Credit (data bytes) received on this port from its downstream.",
                                   MetricType::Counter);
  auto lost = metric_family(
      "sluice_floodgate_credit_lost_bytes_total",
      "Credit (data bytes) owed this port's upstream that could not be kept (the port's "
      "pending list full of destinations it could not send); only sync heals it.",
      MetricType::Counter);
  auto wire = metric_family("sluice_floodgate_control_bytes_total",
                            "Wire bytes of the Floodgate frames sent out of this port (overhead).",
                            MetricType::Counter);
  for (const auto& p : rt_.ports) {
    if (!p->plan.fg_credit) continue;
    const PortTotals t = rt_.port_totals(p->index);
    const Labels l = port_labels(p->index);
    add_frames_by_type(sent, recv, l, kFgFrameTypes, t.fg_sent, t.fg_received);
    add_metric_value(credit_sent, l, double(t.fg_credit_sent_bytes));
    add_metric_value(credit_recv, l, double(t.fg_credit_received_bytes));
    add_metric_value(lost, l, double(t.fg_credit_lost_bytes));
    add_metric_value(wire, l, double(t.fg_control_tx_bytes));
  }
  for (auto* f : {&sent, &recv, &credit_sent, &credit_recv, &lost, &wire})
    out.push_back(std::move(*f));
}

void SluiceCollector::collect_floodgate_switches(std::vector<MetricFamily>& out) const {
  struct Row {
    const char* name;
    const char* help;
    MetricType type;
    uint64_t FloodgateSwitchTotals::*field;
  };
  static constexpr Row kRows[] = {
      {"sluice_floodgate_windows_in_use", "Destination windows below their initial value.",
       MetricType::Gauge, &FloodgateSwitchTotals::windows_in_use},
      {"sluice_floodgate_window_outstanding_bytes",
       "Sum over windows of initial minus current: bytes in flight beyond this switch.",
       MetricType::Gauge, &FloodgateSwitchTotals::window_outstanding_bytes},
      {"sluice_floodgate_voqs_in_use", "VOQs mapped by a destination.", MetricType::Gauge,
       &FloodgateSwitchTotals::voqs_in_use},
      {"sluice_floodgate_voq_packets", "Packets waiting in VOQs.", MetricType::Gauge,
       &FloodgateSwitchTotals::voq_packets},
      {"sluice_floodgate_voq_bytes", "Bytes waiting in VOQs (charged to the shared buffer).",
       MetricType::Gauge, &FloodgateSwitchTotals::voq_bytes},
      {"sluice_floodgate_held_packets_total", "Packets that waited in a VOQ.", MetricType::Counter,
       &FloodgateSwitchTotals::held_packets},
      {"sluice_floodgate_uncontrolled_packets_total",
       "Packets sent without a window because the window table was full.", MetricType::Counter,
       &FloodgateSwitchTotals::uncontrolled_packets},
      {"sluice_floodgate_invalid_credit_bytes_total",
       "Credit refused: for a destination without a window, or beyond its initial value.",
       MetricType::Counter, &FloodgateSwitchTotals::invalid_credit_bytes},
      {"sluice_floodgate_credit_withheld_bytes_total",
       "Credit held back by delayCredit (counted each time it was).", MetricType::Counter,
       &FloodgateSwitchTotals::credit_withheld_bytes},
      {"sluice_floodgate_dst_paused", "(host port, destination) pairs paused now.",
       MetricType::Gauge, &FloodgateSwitchTotals::dst_paused},
      {"sluice_floodgate_sync_healed_data_bytes_total",
       "Bytes FG_SYNC showed lost on the way in, credited upstream.", MetricType::Counter,
       &FloodgateSwitchTotals::sync_healed_data_bytes},
      {"sluice_floodgate_sync_healed_credit_bytes_total",
       "Credit FG_SYNC showed lost on the way up, sent again.", MetricType::Counter,
       &FloodgateSwitchTotals::sync_healed_credit_bytes},
  };
  std::vector<MetricFamily> fams;
  for (const Row& r : kRows) fams.push_back(metric_family(r.name, r.help, r.type));
  for (const SwitchRuntime& sw : rt_.switches) {
    if (sw.fg == nullptr) continue;
    const FloodgateSwitchTotals t = floodgate_switch_totals(rt_, sw);
    const Labels l = {{"switch", sw.cfg->name}};
    for (size_t i = 0; i < fams.size(); ++i)
      add_metric_value(fams[i], l, double(t.*kRows[i].field));
  }
  for (auto& f : fams) out.push_back(std::move(f));
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
      link.metric.push_back(histogram_metric(p->link_lateness, port_labels(p->index)));
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
