#include "switch/mechanisms/tcd/tcd_module.h"

#include "lib/mechanisms/tcd/tcd_params.h"
#include "lib/net/ipv4_rewrite.h"
#include "switch/emulator/fabric_loop.h"
#include "switch/path/worker.h"

namespace sluice {

std::string TcdModule::build(Runtime& rt) {
  auto s = std::make_unique<TcdModuleState>();
  s->ports.resize(rt.ports.size());
  bool any = false;
  for (auto& p : rt.ports) {
    const SwitchConfig& sc = *rt.switches[p->switch_index].cfg;
    if (!sc.tcd.enabled) continue;
    // Its clock starts with the worker's (TcdModule's constructor).
    auto t = std::make_unique<TcdPort>(tcd_params(sc, *p->cfg), tcd_codepoints(sc.tcd),
                                       sc.tm.queues_per_port, 0);
    p->module[kId] = t.get();
    s->ports[p->index] = std::move(t);
    any = true;
  }
  if (any) rt.module_state[kId] = std::move(s);
  return "";
}

TcdModule::TcdModule(Worker& w) : w_(w) {
  for (uint16_t p : w.lcore().ports) {
    if (TcdPort* t = at(w.port(p))) t->start(w.rt().start_ns);
  }
}

void TcdModule::track_pauses(PortRuntime& port, uint64_t now) {
  const EgressPort& tm = *port.tm;
  at(port)->track_pauses(tm.paused_queues(now), now, [&](unsigned q, uint64_t since) {
    return tm.pause_ended_ns(static_cast<uint16_t>(q), since, now);
  });
}

// The packet has left its queue (the bytes it left behind are the queue's
// now, after the whole burst it left in).
void TcdModule::depart(PortRuntime& port, const TmPacket& p, uint64_t now) {
  if (p.queue == port.reply_queue) return;  // TCD watches the data queues
  rte_mbuf* m = static_cast<rte_mbuf*>(p.handle);
  uint8_t* ip = rte_pktmbuf_mtod(m, uint8_t*) + Worker::data_l3_offset(port);
  const uint8_t ecn = ipv4_ecn(ip);
  if ((ecn & 0b11) == 0) return;  // Not-ECT: mark() would not evaluate, nor read the queue
  const uint8_t out = at(port)->mark(p.queue, now, port.tm->queue_bytes(p.queue), ecn);
  if (out != ecn) ipv4_set_ecn(ip, out);
}

void TcdModule::slow_timers(PortRuntime& port, uint64_t now) {
  TcdPort* t = at(port);
  if (t == nullptr) return;
  const EgressPort& tm = *port.tm;
  t->tick(now, [&](unsigned q) { return tm.queue_bytes(static_cast<uint16_t>(q)); });
}

uint64_t TcdModule::port_timers_due(const PortRuntime& port, uint64_t now) const {
  const TcdPort* t = at(port);
  if (t == nullptr) return EventCalendar::kNever;
  return std::min(t->next_due_ns(), port.tm->next_pause_end_ns(now));
}

// A pause that expired with no frame waiting: TCD sees it end now.
void TcdModule::port_timers(PortRuntime& port, uint64_t now) {
  TcdPort* t = at(port);
  if (t == nullptr) return;
  track_pauses(port, now);
  if (t->next_due_ns() <= now) slow_timers(port, now);
}

uint8_t TcdModule::queue_state(const PortRuntime& port, uint32_t queue) {
  const TcdPort* t = at(port);
  return t != nullptr ? 1 + index_of(t->detector(queue).last_state()) : 0;
}

// TCD per egress port, summed over its queues (docs/mechanisms/tcd.md).
void TcdModule::collect(const Runtime& rt, MetricFamilies& out) {
  using prometheus::MetricType;
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
  for (const auto& p : rt.ports) {
    const TcdPort* tp = at(*p);
    if (tp == nullptr) continue;
    const TcdPort& t = *tp;
    const MetricLabels l = port_labels(rt, p->index);
    for (TcdState s : kStates) {
      MetricLabels ls = l;
      ls.push_back({"state", tcd_state_name(s)});
      add_metric_value(time, ls, t.time_ns(s) * 1e-9);
      for (TcdState to : kStates) {
        if (to == s) continue;
        MetricLabels lt = l;
        lt.push_back({"from", tcd_state_name(s)});
        lt.push_back({"to", tcd_state_name(to)});
        add_metric_value(moves, lt, double(t.transitions(s, to)));
      }
    }
    add_metric_value(pauses, l, double(t.pauses()));
    MetricLabels lc = l, lu = l;
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

// TCD on an egress port, summed over its queues (docs/metrics.md): time in
// each state, transitions, pauses seen, marks, and the ON periods' p50, p99
// and count (bucket upper bounds) to set beside max_T_on.
void TcdModule::summary_port(const Runtime& rt, uint16_t port, JsonFields& field) {
  const TcdPort* tp = at(*rt.ports[port]);
  if (tp == nullptr) return;
  const TcdPort& t = *tp;
  constexpr TcdState kStates[] = {TcdState::kNonCongestion, TcdState::kCongestion,
                                  TcdState::kUndetermined};
  for (TcdState s : kStates) field("tcd_" + std::string(tcd_state_name(s)) + "_ns", t.time_ns(s));
  for (TcdState from : kStates) {
    for (TcdState to : kStates) {
      if (from == to) continue;
      field("tcd_" + std::string(tcd_state_name(from)) + "_to_" + tcd_state_name(to),
            t.transitions(from, to));
    }
  }
  field("tcd_pauses", t.pauses());
  field("tcd_ce_marks", t.marker().ce_marks.get());
  field("tcd_ue_marks", t.marker().ue_marks.get());
  LatencyHistogram on;
  t.add_on_periods(&on);
  field("tcd_on_periods", on.total());
  field("tcd_on_period_p50_ns", quantile_upper_ns(on, 0.5));
  field("tcd_on_period_p99_ns", quantile_upper_ns(on, 0.99));
  field("tcd_max_t_on_ns", t.num_queues() ? t.detector(0).params().max_t_on_ns : 0);
}

}  // namespace sluice
