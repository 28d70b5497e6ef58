#include "switch/mechanisms/flowtune/flowtune_module.h"

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
std::unique_ptr<flowtune::FabricAllocator> fabric_allocator(const Runtime& rt,
                                                            const FlowtuneModuleState& s) {
  const FlowtuneAllocatorConfig& c = rt.config.flowtune_allocator;
  flowtune::FabricAllocatorConfig f;
  f.control_delay_ns = c.control_delay_ns;
  f.edges = static_cast<uint32_t>(s.numbered.size());
  f.core.iteration_ns = c.iteration_ns;
  f.core.threshold = c.threshold;
  f.core.max_hosts = c.hosts;
  f.core.host_rate_bps = c.host_rate_bps;
  f.core.lease_ns = UINT64_MAX;
  uint64_t slots = 0;
  for (const FlowtuneEdge* e : s.numbered) {
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
  if (c.full_paths) {
    for (const auto& p : rt.ports) f.core.max_fabric_links += p->kind == PortKind::kLink;
  }
  return std::make_unique<flowtune::FabricAllocator>(f);
}

// Full paths: a link of the allocator for each direction of each internal
// link, its capacity in host-rate units (a 40 Gb/s link over 10 Gb/s hosts
// is 4).
std::string add_fabric_links(const Runtime& rt, FlowtuneModuleState& s) {
  const double host_rate = double(s.allocator->core().config().host_rate_bps);
  s.port_link.assign(rt.ports.size(), flowtune::kInvalidLink);
  for (const auto& p : rt.ports) {
    if (p->kind != PortKind::kLink) continue;
    if (p->cfg->rate_bps == 0 || host_rate <= 0)
      return rt.switch_label(p->index) + "/" + p->cfg->name +
             ": flowtune_allocator paths: fabric needs every internal link's rate and the "
             "hosts' rate";
    s.port_link[p->index] = s.allocator->add_fabric_link(double(p->cfg->rate_bps) / host_rate);
    if (s.port_link[p->index] == flowtune::kInvalidLink)
      return "flowtune_allocator: no room for the fabric's links";
  }
  return "";
}

}  // namespace

// Per switch with flowtune on, one FlowtuneEdge per worker lcore that owns
// some of its host ports, and those ports pointed at it; each edge with its
// UDP path to sluice-allocator (real time) or attached to the allocator in
// the fabric, made here (exact time, flowtune_allocator).
std::string FlowtuneModule::build(Runtime& rt) {
  bool any = false;
  for (const SwitchRuntime& sw : rt.switches) any |= sw.cfg->flowtune.enabled;
  if (!any) return "";
  const bool fabric = rt.config.flowtune_allocator.enabled;
  auto s = std::make_unique<FlowtuneModuleState>();
  s->edges.resize(rt.workers.size());
  for (auto& per_switch : s->edges) per_switch.resize(rt.switches.size());
  for (SwitchRuntime& sw : rt.switches) {
    if (!sw.cfg->flowtune.enabled) continue;
    for (uint16_t g : sw.ports) {
      PortRuntime& p = *rt.ports[g];
      if (p.cfg->role != PortRole::kHost) continue;
      auto& edge = s->edges[p.owner_slot][sw.index];
      if (edge == nullptr) {
        edge = std::make_unique<FlowtuneEdge>(sw.cfg->flowtune);
        s->numbered.push_back(edge.get());
        std::string err;
        if (!fabric &&
            !edge->open_udp(std::to_string(sw.index) + "_" + std::to_string(p.owner_slot), &err))
          return "switch " + sw.cfg->name + ": " + err;
      }
      p.module[kId] = edge.get();
      p.in_steps |= 1u << kId;  // its forward step: flowlets and the pacer
    }
  }
  if (fabric && !s->numbered.empty()) {
    s->allocator = fabric_allocator(rt, *s);
    if (rt.config.flowtune_allocator.full_paths) {
      if (std::string err = add_fabric_links(rt, *s); !err.empty()) return err;
    }
    for (uint32_t i = 0; i < s->numbered.size(); ++i)
      s->numbered[i]->attach_fabric(s->allocator.get(), i);
  }
  rt.module_state[kId] = std::move(s);
  return "";
}

}  // namespace sluice
