#include "switch/mechanisms/flowtune/flowtune_builder.h"

#include <algorithm>
#include <memory>
#include <string>

namespace sluice {

namespace {

// The allocator in the fabric for the edges just made (exact time): its
// lease is theirs (the smallest), its host rate their host ports' unless
// given, its flow table twice their flowlet slots unless given (an edge
// slot's old flowlet may still be live at the allocator, its END in
// flight, when the next one's START arrives).
std::unique_ptr<flowtune::FabricAllocator> fabric_allocator(const Runtime& rt) {
  const FlowtuneAllocatorConfig& c = rt.config.flowtune_allocator;
  flowtune::FabricAllocatorConfig f;
  f.control_delay_ns = c.control_delay_ns;
  f.edges = static_cast<uint32_t>(rt.flowtune_edges.size());
  f.core.iteration_ns = c.iteration_ns;
  f.core.threshold = c.threshold;
  f.core.max_hosts = c.hosts;
  f.core.host_rate_bps = c.host_rate_bps;
  f.core.lease_ns = UINT64_MAX;
  uint64_t slots = 0;
  for (const FlowtuneEdge* e : rt.flowtune_edges) {
    f.core.lease_ns = std::min(f.core.lease_ns, e->cfg.lease_ns);
    slots += e->cfg.flows;
  }
  for (const auto& p : rt.ports) {
    const SwitchConfig& sw = *rt.switches[p->switch_index].cfg;
    if (f.core.host_rate_bps == 0 && sw.flowtune.enabled && p->cfg->role == PortRole::kHost)
      f.core.host_rate_bps = p->cfg->rate_bps;  // one rate for all (config_validate.cc)
  }
  f.core.max_flows =
      c.flows != 0 ? c.flows : static_cast<uint32_t>(std::min<uint64_t>(2 * slots, 1u << 24));
  // What may be in flight each way: a START and an END per slot, and a
  // few iterations' rates for every flow; more is lost and counted.
  f.news_in_flight = static_cast<uint32_t>(std::min<uint64_t>(2 * slots, 1u << 24));
  f.rates_in_flight = static_cast<uint32_t>(std::min<uint64_t>(4ull * f.core.max_flows, 1u << 24));
  return std::make_unique<flowtune::FabricAllocator>(f);
}

}  // namespace

std::string create_flowtune(Runtime& rt) {
  const bool fabric = rt.config.flowtune_allocator.enabled;
  for (auto& w : rt.workers) w->flowtune.resize(rt.switches.size());
  for (SwitchRuntime& sw : rt.switches) {
    if (!sw.cfg->flowtune.enabled) continue;
    for (uint16_t g : sw.ports) {
      PortRuntime& p = *rt.ports[g];
      if (p.cfg->role != PortRole::kHost) continue;
      auto& edge = rt.workers[p.owner_slot]->flowtune[sw.index];
      if (edge == nullptr) {
        edge = std::make_unique<FlowtuneEdge>(sw.cfg->flowtune);
        rt.flowtune_edges.push_back(edge.get());
        std::string err;
        if (!fabric &&
            !edge->open_udp(std::to_string(sw.index) + "_" + std::to_string(p.owner_slot), &err))
          return "switch " + sw.cfg->name + ": " + err;
      }
      p.flowtune = edge.get();
    }
  }
  if (fabric && !rt.flowtune_edges.empty()) {
    rt.flowtune_allocator = fabric_allocator(rt);
    for (uint32_t i = 0; i < rt.flowtune_edges.size(); ++i)
      rt.flowtune_edges[i]->attach_fabric(rt.flowtune_allocator.get(), i);
  }
  return "";
}

FlowtuneTotals flowtune_totals(const Runtime& rt, const SwitchRuntime& sw) {
  FlowtuneTotals t;
  for (const auto& w : rt.workers) {
    const FlowtuneEdge* e = w->flowtune.empty() ? nullptr : w->flowtune[sw.index].get();
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

}  // namespace sluice
