#include "switch/mechanisms/flowtune/flowtune_module.h"

#include <algorithm>
#include <cinttypes>
#include <cstdio>

#include "lib/mechanisms/flowtune/flow_key.h"
#include "lib/net/ipv4_rewrite.h"
#include "lib/emulator/transport/segment_wire.h"
#include "switch/emulator/fabric_loop.h"
#include "switch/path/worker.h"

namespace sluice {
namespace {

// Slots the idle scan looks at per pass (every kExpireEveryNs): a whole
// sweep of the default 4096 takes 8 passes (160 µs), which is how late a
// FLOWLET_END may be after the idle gap.
constexpr uint32_t kExpireSlotsPerPass = 512;
// Held packets released per loop iteration, per edge.
constexpr uint32_t kReleasePerPass = 256;

FlowtuneModuleState* state(const Runtime& rt) {
  return static_cast<FlowtuneModuleState*>(rt.module_state[FlowtuneModule::kId].get());
}

// An edge's timers as an element of the emulator's calendar: its next held
// packet due, and the first instant a flowlet's idle gap runs out.
class EdgeTimers final : public CalendarElement {
 public:
  EdgeTimers(FlowtuneModule& m, FlowtuneEdge& e) : m_(m), e_(e) {}
  uint64_t due(uint64_t now, uint8_t) override { return m_.edge_due(e_, now); }
  uint8_t run(uint64_t now) override {
    m_.edge_timers(e_, now);
    return kAllParts;
  }
  const char* name() const override { return "Flowtune edge"; }

 private:
  FlowtuneModule& m_;
  FlowtuneEdge& e_;
};

// Flowtune's allocator in the fabric: news or a rate arriving over its
// control path, an iteration, a lease pass.
class AllocatorElement final : public CalendarElement {
 public:
  explicit AllocatorElement(FlowtuneModule& m) : m_(m) {}
  uint64_t due(uint64_t now, uint8_t) override { return m_.allocator_due(now); }
  uint8_t run(uint64_t now) override {
    m_.run_allocator(now);
    return kAllParts;
  }
  const char* name() const override { return "Flowtune allocator"; }

 private:
  FlowtuneModule& m_;
};

}  // namespace

// Full paths: the allocator's links a packet entering switch `sw` crosses
// between switches, each switch choosing as the forward stage does (its
// route, and among an ECMP group's ports the one its salted 5-tuple hash
// picks), until a port that is not an internal link. At most kMaxVia + 1
// (the allocator refuses a longer path); 0 where a hop has no route.
uint32_t FlowtuneModule::fabric_via(uint16_t sw, const ParsedPacket& pp,
                                    flowtune::LinkId* via) const {
  const Runtime& rt = w_.rt();
  const uint32_t hash =
      unsalted_flow_hash(rt.switches[sw], pp.src_ip, pp.dst_ip, pp.proto, pp.src_port, pp.dst_port);
  uint32_t n = 0;
  while (n <= flowtune::FabricAllocator::kMaxVia) {
    const SwitchRuntime& at_sw = rt.switches[sw];
    const uint32_t nh = route_next_hop(at_sw, pp.dst_ip);
    if (nh == kNoDefaultRoute || nh == kLocalNextHop) return 0;
    const NextHopGroup16& g = at_sw.groups[nh];
    const uint16_t egress = ecmp_member(g, salted_flow_hash(hash, at_sw.ecmp_salt));
    const PortRuntime& out = *rt.ports[egress];
    if (out.kind != PortKind::kLink) return n;
    via[n++] = s_->port_link[egress];
    sw = rt.ports[out.link_out->rx_port]->switch_index;
  }
  return n;
}

// True: the packet goes on to admission now. False: the pacer holds it (it
// comes back when due) or dropped it.
bool FlowtuneModule::forward(PortRuntime& in, rte_mbuf* m, const ParsedPacket& pp, uint64_t now) {
  FlowtuneEdge& e = *at(in);
  // pace_at: host: only a transport host's data makes a flowlet. Its ACKs
  // are no flow the allocator should give a share of the links (the
  // paper's servers report data flowlets only, section 4).
  if (e.cfg.pace_at_host && in.pcap && in.pcap->transport_host()) {
    uint32_t flow;
    if (m->data_len <= pp.l3_offset ||
        !transport_data_flow(rte_pktmbuf_mtod(m, const uint8_t*) + pp.l3_offset,
                             m->data_len - pp.l3_offset, &flow))
      return true;
  }
  const uint64_t key = flowlet_key(pp.src_ip, pp.dst_ip, pp.proto, pp.src_port, pp.dst_port);
  const FlowletTable::Result r =
      e.flowlets.on_packet(key, pp.src_ip, pp.dst_ip, now - w_.unwatched_ns());
  if (r.ended_flow_id != 0) end(e, r.ended_flow_id, now);
  if (r.kind == FlowletTable::Kind::kUntracked) return true;
  if (r.kind == FlowletTable::Kind::kStart) {
    e.pacer.start(r.flow_id);
    flowtune::LinkId via[flowtune::FabricAllocator::kMaxVia + 1];
    const uint32_t n = s_->port_link.empty() ? 0 : fabric_via(in.switch_index, pp, via);
    e.report_start(r.flow_id, pp.src_ip, pp.dst_ip, now, {via, n});
    touch_edge(e);  // its idle gap runs out from now
    touch_allocator();
    if (e.cfg.pace_at_host) note_host_flow(e, in, m, pp, r.flow_id);
  }
  // The endpoint paces itself (host_rate); the edge only tells
  // the allocator of flowlets.
  if (e.cfg.pace_at_host) return true;
  const uint32_t bytes = m->pkt_len + in.cfg->wire_overhead_bytes;
  const FlowPacer::Verdict v = e.pacer.admit(r.flow_id, bytes, now);
  switch (v.action) {
    case FlowPacer::Action::kSend:
      return true;
    case FlowPacer::Action::kUnpaced:
      // The lease ran out with packets still held: they leave first, so
      // the flow stays in order.
      flush(e, e.flowlets.slot_of(r.flow_id), now);
      return true;
    case FlowPacer::Action::kDrop:
      w_.drop(in.index, m, DropReason::kPacerFull);
      return false;
    case FlowPacer::Action::kHold:
      break;
  }
  if (!e.held.push(e.flowlets.slot_of(r.flow_id), {m, v.send_at_ns, r.flow_id, bytes})) {
    e.pacer.sent(r.flow_id, bytes);  // cannot happen while the pacer bounds the queue
    w_.drop(in.index, m, DropReason::kPacerFull);
    return false;
  }
  e.flowlets.touch(r.flow_id, v.send_at_ns - w_.unwatched_ns());
  touch_edge(e);  // a packet held until send_at_ns
  if (v.ecn_mark && (pp.tos & 3) != 0)
    w_.mark_ce(w_.counters(in.index), rte_pktmbuf_mtod(m, uint8_t*) + pp.l3_offset);
  return false;
}

// A flowlet ended: what it still holds leaves now (the next flowlet in its
// slot starts its own queue), and the allocator is told. A held packet
// keeps its flowlet active until it is due (FlowletTable::touch), so the
// flush should find nothing; it stays so that one slot's queue can never
// mix two flowlets.
void FlowtuneModule::end(FlowtuneEdge& e, uint32_t flow_id, uint64_t now) {
  flush(e, e.flowlets.slot_of(flow_id), now);
  e.report_end(flow_id, now);
  touch_allocator();
}

void FlowtuneModule::flush(FlowtuneEdge& e, uint32_t slot, uint64_t now) {
  e.held.flush(slot, [&](const PacedQueues::Held& h) {
    e.flushed.add();
    release_held(e, h, now);
  });
}

// A held packet leaves the pacer's queue and goes on to admission.
void FlowtuneModule::release_held(FlowtuneEdge& e, const PacedQueues::Held& h, uint64_t now) {
  e.pacer.sent(h.flow_id, h.bytes);
  w_.to_admission(static_cast<rte_mbuf*>(h.pkt), now);
}

// Rates that arrived apply; held packets that are due go on to admission;
// every kExpireEveryNs the idle flowlets end.
bool FlowtuneModule::poll_edges(uint64_t now) {
  bool busy = false;
  for (FlowtuneEdge* e : edges_) {
    e->apply_rates(now);
    if (e->held.next_due_ns() <= now) {
      busy |= e->held.pop_due(now, kReleasePerPass,
                              [&](const PacedQueues::Held& h) { release_held(*e, h, now); }) != 0;
    }
    if (now >= e->next_expire_ns) {
      e->next_expire_ns = now + FlowtuneEdge::kExpireEveryNs;
      e->flowlets.expire(now - w_.unwatched_ns(), kExpireSlotsPerPass,
                         [&](uint32_t id) { end(*e, id, now); });
    }
  }
  return busy;
}

// Exact time: the edge's held packets that are due go on to admission, and
// a whole sweep of its flowlet table runs when the first idle gap runs out,
// so every FLOWLET_END leaves at the instant its flowlet ended. (A lease
// that runs out needs no timer: the flow's next packet finds it so.)
void FlowtuneModule::edge_timers(FlowtuneEdge& e, uint64_t now) {
  if (e.held.next_due_ns() <= now) {
    e.held.pop_due(now, kReleasePerPass,
                   [&](const PacedQueues::Held& h) { release_held(e, h, now); });
  }
  if (e.flowlets.next_end_ns() <= now) {
    e.flowlets.expire(now, e.flowlets.capacity(), [&](uint32_t id) { end(e, id, now); });
  }
}

uint64_t FlowtuneModule::edge_due(const FlowtuneEdge& e, uint64_t now) const {
  const uint64_t due = std::min(e.held.next_due_ns(), e.flowlets.next_end_ns());
  return due == EventCalendar::kNever ? due : std::max(due, now);
}

// Exact time: what the allocator in the fabric has due now; each rate that
// reached its edge goes to the pacer (no edge timer moves: a rate changes
// the pace of packets still to come), or with pace_at: host to the
// transport host that sends the flow.
void FlowtuneModule::run_allocator(uint64_t now) {
  s_->allocator->run(now, [&](uint32_t edge, uint32_t flow_id, uint32_t kbps) {
    FlowtuneEdge& e = *s_->numbered[edge];
    if (e.cfg.pace_at_host) {
      host_rate(e, flow_id, kbps, now);
    } else {
      e.apply_rate(flow_id, kbps, now);
    }
  });
}

// pace_at: host: a flowlet's first packet says which transport host and
// flow it is (a packet that is not a transport host's data leaves the slot
// unknown, and its rates unused).
void FlowtuneModule::note_host_flow(FlowtuneEdge& e, const PortRuntime& in, const rte_mbuf* m,
                                    const ParsedPacket& pp, uint32_t flowlet) {
  FlowtuneEdge::HostFlow& h = e.host_flows[e.flowlets.slot_of(flowlet)];
  h.flowlet = 0;
  uint32_t flow;
  if (!in.pcap || !in.pcap->transport_host() || m->data_len <= pp.l3_offset) return;
  if (!transport_data_flow(rte_pktmbuf_mtod(m, const uint8_t*) + pp.l3_offset,
                           m->data_len - pp.l3_offset, &flow))
    return;
  h = {flowlet, in.index, flow};
}

// pace_at: host: a rate reached the edge; the sending host paces the flow
// at it for a lease (the paper's servers, section 4).
void FlowtuneModule::host_rate(FlowtuneEdge& e, uint32_t flowlet, uint32_t kbps, uint64_t now) {
  const FlowtuneEdge::HostFlow& h = e.host_flows[e.flowlets.slot_of(flowlet)];
  if (h.flowlet != flowlet) return;
  PortRuntime& port = w_.port(h.port);
  if (port.pcap->transport_host()->set_allocation(h.flow, now, uint64_t{kbps} * 1000,
                                                  now + e.cfg.lease_ns)) {
    e.rate_updates.add();
    w_.touch_rx(port.index);
  }
}

// Stopping: every held packet goes on to admission, to be sent or counted
// with the rest of what is queued.
void FlowtuneModule::finish(uint64_t now) {
  for (FlowtuneEdge* e : edges_) {
    e->held.pop_due(PacedQueues::kNever - 1, UINT32_MAX,
                    [&](const PacedQueues::Held& h) { release_held(*e, h, now); });
  }
}

FlowtuneModule::FlowtuneModule(Worker& w) : w_(w), s_(state(w.rt())) {
  if (s_ == nullptr) return;
  for (const auto& e : s_->edges[w.slot()]) {
    if (e != nullptr) edges_.push_back(e.get());
  }
}

void FlowtuneModule::elements(FabricLoop& loop) {
  if (s_ == nullptr) return;
  for (FlowtuneEdge* e : edges_) e->element = loop.add(std::make_unique<EdgeTimers>(*this, *e));
  if (s_->allocator) allocator_element_ = loop.add(std::make_unique<AllocatorElement>(*this));
}

uint64_t FlowtuneModule::allocator_due(uint64_t now) const {
  const uint64_t due = s_->allocator->next_due_ns();
  return due == EventCalendar::kNever ? due : std::max(due, now);
}

// Exact time: an edge's timers, or the allocator's due time, may have moved.
void FlowtuneModule::touch_edge(const FlowtuneEdge& e) {
  if (w_.fabric() != nullptr) w_.touch_element(e.element);
}

void FlowtuneModule::touch_allocator() {
  if (allocator_element_ != UINT32_MAX) w_.touch_element(allocator_element_);
}

void FlowtuneModule::start(Runtime& rt) {
  if (FlowtuneModuleState* s = state(rt)) s->control.start(s->numbered);
}

void FlowtuneModule::stop(Runtime& rt) {
  if (FlowtuneModuleState* s = state(rt)) s->control.stop();
}

void FlowtuneModule::release(Runtime& rt) {
  FlowtuneModuleState* s = state(rt);
  if (s == nullptr) return;
  for (FlowtuneEdge* e : s->numbered) {
    if (e->udp() != nullptr) e->udp()->release_rings();
  }
}

namespace {

// An edge switch's counters summed over its lcores (report, scraper).
struct FlowtuneTotals {
  uint64_t flowlets_started = 0, flowlets_ended = 0, active_flowlets = 0;
  uint64_t table_full = 0, collisions = 0;
  uint64_t paced = 0, unpaced = 0, held = 0, marked = 0, dropped = 0, flushed = 0;
  uint64_t held_now = 0;
  // datagrams_sent: in exact time, the datagrams the news would fill.
  uint64_t starts_sent = 0, ends_sent = 0, datagrams_sent = 0, send_errors = 0;
  uint64_t events_lost = 0;  // the way to the allocator (or, UDP, back) full
  uint64_t datagrams_received = 0, rate_updates = 0, stale_updates = 0, unexpected = 0;
  uint64_t malformed = 0;  // all reasons
};

FlowtuneTotals totals(const FlowtuneModuleState& s, const SwitchRuntime& sw) {
  FlowtuneTotals t;
  for (const auto& per_switch : s.edges) {
    const FlowtuneEdge* e = per_switch[sw.index].get();
    if (e == nullptr) continue;
    t.flowlets_started += e->flowlets.flowlets_started.get();
    t.flowlets_ended += e->flowlets.flowlets_ended.get();
    t.active_flowlets += e->flowlets.active();
    t.table_full += e->flowlets.table_full.get();
    t.collisions += e->flowlets.collisions.get();
    t.paced += e->pacer.paced.get();
    t.unpaced += e->pacer.unpaced.get();
    t.held += e->pacer.held.get();
    t.marked += e->pacer.marked.get();
    t.dropped += e->pacer.dropped.get();
    t.flushed += e->flushed.get();
    t.held_now += e->held.total_held();
    t.starts_sent += e->starts_reported.get();
    t.ends_sent += e->ends_reported.get();
    t.events_lost += e->events_lost.get();
    t.rate_updates += e->rate_updates.get();
    t.stale_updates += e->pacer.stale.get();
    t.datagrams_sent += e->messages_sent.get();
    if (const FlowtuneUdpPath* u = e->udp()) {
      t.events_lost += u->rates_lost.get();
      t.datagrams_sent += u->datagrams_sent.get();
      t.send_errors += u->send_errors.get();
      t.datagrams_received += u->datagrams_received.get();
      t.unexpected += u->unexpected_messages.get();
      for (const RelaxedCounter& m : u->malformed) t.malformed += m.get();
    }
  }
  return t;
}

}  // namespace

// Flowtune per edge switch (docs/mechanisms/flowtune.md); the pacer's drops
// are port drops (sluice_port_drops_total, reason pacer_full).
void FlowtuneModule::collect(const Runtime& rt, MetricFamilies& out) {
  using prometheus::MetricType;
  const FlowtuneModuleState* s = state(rt);
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
  std::vector<prometheus::MetricFamily> families;
  for (const Item& item : kItems)
    families.push_back(metric_family(item.name, item.help, item.type));
  for (const SwitchRuntime& sw : rt.switches) {
    if (!sw.cfg->flowtune.enabled || s == nullptr) continue;
    FlowtuneTotals t = totals(*s, sw);
    t.malformed += t.unexpected;
    for (size_t i = 0; i < families.size(); ++i)
      add_metric_value(families[i], {{"switch", sw.cfg->name}}, double(t.*kItems[i].value));
  }
  for (auto& f : families) out.push_back(std::move(f));
  if (s == nullptr || !s->allocator) return;
  // The allocator in the fabric (exact time; docs/mechanisms/flowtune.md,
  // "The allocator in the fabric"): the names of sluice-allocator's metrics
  // under sluice_flowtune_allocator_.
  const flowtune::FabricAllocatorCounters& c = s->allocator->counters();
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


// A Flowtune edge switch (docs/metrics.md): flowlets, what its pacer did
// with packets, and its exchange with the allocator.
void FlowtuneModule::summary_switch(const Runtime& rt, const SwitchRuntime& sw, JsonFields& f) {
  const FlowtuneModuleState* s = state(rt);
  if (!sw.cfg->flowtune.enabled || s == nullptr) return;
  const FlowtuneTotals t = totals(*s, sw);
  JsonObject j;
  j("flowlets_started", t.flowlets_started);
  j("flowlets_ended", t.flowlets_ended);
  j("flowlets_active", t.active_flowlets);
  j("flowlet_table_full", t.table_full);
  j("flowlet_collisions", t.collisions);
  j("paced", t.paced);
  j("unpaced", t.unpaced);
  j("held", t.held);
  j("ecn_marked", t.marked);
  j("pacer_full", t.dropped);
  j("flushed", t.flushed);
  j("held_at_stop", t.held_now);
  j("starts_sent", t.starts_sent);
  j("ends_sent", t.ends_sent);
  j("datagrams_sent", t.datagrams_sent);
  j("send_errors", t.send_errors);
  j("events_lost", t.events_lost);
  j("datagrams_received", t.datagrams_received);
  j("rate_updates", t.rate_updates);
  j("stale_rate_updates", t.stale_updates);
  j("unexpected_messages", t.unexpected);
  j("malformed_messages", t.malformed);
  f.raw("flowtune", j.str());
}

// Flowtune's allocator in the fabric (docs/metrics.md): what reached it,
// what it did, and what it sent back.
void FlowtuneModule::summary_top(const Runtime& rt, JsonFields& f) {
  const FlowtuneModuleState* s = state(rt);
  if (s == nullptr || !s->allocator) return;
  const flowtune::FabricAllocator& a = *s->allocator;
  const flowtune::FabricAllocatorCounters& c = a.counters();
  const flowtune::AllocatorConfig& cfg = a.core().config();
  JsonObject j;
  j("control_delay_ns", a.control_delay_ns());
  j("iteration_ns", cfg.iteration_ns);
  j("lease_ns", cfg.lease_ns);
  j("host_rate_bps", cfg.host_rate_bps);
  j("flowlets_started", c.core.starts.get());
  j("flowlets_ended", c.core.ends.get());
  j("start_duplicate", c.core.start_duplicate.get());
  j("start_refused", c.core.start_refused.get());
  j("end_unknown", c.core.end_unknown.get());
  j("flows_at_stop", c.core.flows.get());
  j("hosts", c.core.hosts.get());
  // Full paths: the allocator's links between switches, among all its links.
  j("fabric_links", cfg.max_fabric_links);
  j("links", c.core.links.get());
  j("iterations", c.core.iterations.get());
  j("rate_updates", c.core.updates.get());
  j("lease_resends", c.core.lease_resends.get());
  j("rates_delivered", c.rates_delivered.get());
  j("update_messages", c.update_messages.get());
  j("update_bytes", c.update_bytes.get());
  j("news_lost", c.news_lost.get());
  j("rates_lost", c.rates_lost.get());
  f.raw("flowtune_allocator", j.str());
}

void FlowtuneModule::print_summary(const Runtime& rt) {
  const FlowtuneModuleState* s = state(rt);
  if (s == nullptr) return;
  for (const SwitchRuntime& sw : rt.switches) {
    if (!sw.cfg->flowtune.enabled) continue;
    const FlowtuneTotals t = totals(*s, sw);
    std::printf("flowtune %s: %" PRIu64 " flowlets, packets %" PRIu64 " paced at once, %" PRIu64
                " held, %" PRIu64 " unpaced, %" PRIu64 " dropped (pacer full); %" PRIu64
                " rate updates, %" PRIu64 " datagrams lost on send\n",
                sw.cfg->name.c_str(), t.flowlets_started, t.paced, t.held, t.unpaced, t.dropped,
                t.rate_updates, t.send_errors);
  }
  if (!s->allocator) return;
  const flowtune::FabricAllocator& a = *s->allocator;
  const flowtune::FabricAllocatorCounters& c = a.counters();
  std::printf(
      "flowtune allocator (in the fabric, control delay %.6g us, iteration %.6g us): %" PRIu64
      " flowlets (%" PRIu64 " ended), %" PRIu64 " iterations, %" PRIu64 " rate updates (%" PRIu64
      " lease re-sends) in %" PRIu64 " messages; lost %" PRIu64 " news, %" PRIu64 " rates\n",
      double(a.control_delay_ns()) * 1e-3, double(a.core().config().iteration_ns) * 1e-3,
      c.core.starts.get(), c.core.ends.get(), c.core.iterations.get(), c.core.updates.get(),
      c.core.lease_resends.get(), c.update_messages.get(), c.news_lost.get(), c.rates_lost.get());
}

}  // namespace sluice
