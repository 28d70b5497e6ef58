#include "switch/flowtune_builder.h"

#include <memory>
#include <string>

namespace sluice {

std::string create_flowtune(Runtime& rt) {
  for (auto& w : rt.workers) w->flowtune.resize(rt.switches.size());
  for (SwitchRuntime& sw : rt.switches) {
    if (!sw.cfg->flowtune.enabled) continue;
    for (uint16_t g : sw.ports) {
      PortRuntime& p = *rt.ports[g];
      if (p.cfg->role != PortRole::kHost) continue;
      auto& edge = rt.workers[p.owner_slot]->flowtune[sw.index];
      if (edge == nullptr) {
        edge = std::make_unique<FlowtuneEdge>(sw.cfg->flowtune);
        std::string err;
        if (!edge->open(std::to_string(sw.index) + "_" + std::to_string(p.owner_slot), &err))
          return "switch " + sw.cfg->name + ": " + err;
      }
      p.flowtune = edge.get();
    }
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
    t.events_lost += e->events_lost.get() + e->rates_lost.get();
    t.datagrams_sent += e->datagrams_sent.get();
    t.send_errors += e->send_errors.get();
    t.datagrams_received += e->datagrams_received.get();
    t.rate_updates += e->rate_updates.get();
    t.stale_updates += e->pacer.stale.get();
    t.unexpected += e->unexpected_messages.get();
    for (const RelaxedCounter& m : e->malformed) t.malformed += m.get();
  }
  return t;
}

}  // namespace sluice
