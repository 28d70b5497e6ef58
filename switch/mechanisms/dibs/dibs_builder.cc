#include "switch/mechanisms/dibs/dibs_builder.h"

#include <memory>
#include <string>

#include "lib/common/seeds.h"

namespace sluice {
namespace {

bool is_dibs_switch_port(const Runtime& rt, uint16_t g) {
  const PortRuntime& p = *rt.ports[g];
  return rt.switches[p.switch_index].cfg->dibs.enabled && p.cfg->role == PortRole::kSwitch;
}

// The internal link's far end is a port of a DIBS switch.
bool link_from_dibs(const Runtime& rt, const PortRuntime& p) {
  const std::string& ref = p.cfg->link_peer;
  const size_t slash = ref.find('/');
  if (p.kind != PortKind::kLink || slash == std::string::npos) return false;
  const int peer = find_port(rt, PortRef{ref.substr(0, slash), ref.substr(slash + 1)});
  return peer >= 0 && is_dibs_switch_port(rt, static_cast<uint16_t>(peer));
}

void create_switch(Runtime& rt, SwitchRuntime& sw) {
  auto d = std::make_unique<DibsRuntime>();
  d->local.assign(rt.ports.size(), 0);
  for (size_t i = 0; i < sw.ports.size(); ++i) {
    const uint16_t g = sw.ports[i];
    d->local[g] = static_cast<uint16_t>(i);
    PortRuntime& p = *rt.ports[g];
    // A refusal on one lcore may pick a candidate another one owns.
    if (p.owner_slot != rt.ports[sw.ports[0]]->owner_slot) d->cross_lcore = true;
    if (p.cfg->role != PortRole::kSwitch) continue;
    d->candidates.push_back(g);
    p.dibs_link = link_from_dibs(rt, p);
  }
  d->snapshots = std::make_unique<PortSnapshot[]>(d->candidates.size());
  for (auto& w : rt.workers) {
    bool owns = false;
    for (uint16_t g : sw.ports) owns |= rt.ports[g]->owner_slot == w->slot;
    if (!owns) continue;
    w->dibs[sw.index] = std::make_unique<DibsRules>(
        sw.cfg->dibs, static_cast<uint32_t>(sw.ports.size()),
        derive_seed(rt.config.seed, SeedStream::kDibs, sw.index * 64 + w->slot));
    for (uint32_t c = 0; c < d->candidates.size() && d->cross_lcore; ++c) {
      if (rt.ports[d->candidates[c]]->owner_slot == w->slot)
        w->dibs_publish.push_back({sw.index, c});
    }
  }
  sw.dibs = std::move(d);
}

}  // namespace

std::string create_dibs(Runtime& rt) {
  for (auto& w : rt.workers) w->dibs.resize(rt.switches.size());
  for (SwitchRuntime& sw : rt.switches) {
    if (sw.cfg->dibs.enabled) create_switch(rt, sw);
  }
  return "";
}

DibsSwitchTotals dibs_switch_totals(const Runtime& rt, const SwitchRuntime& sw) {
  DibsSwitchTotals t;
  for (const auto& w : rt.workers) {
    const DibsRules* r = sw.index < w->dibs.size() ? w->dibs[sw.index].get() : nullptr;
    if (r == nullptr) continue;
    for (uint32_t p = 0; p < r->counters.port_count(); ++p)
      t.detours += r->counters.detours(static_cast<uint16_t>(p));
    for (unsigned k = 0; k < kDetourDropCount; ++k)
      t.drops[k] += r->counters.drops(static_cast<DetourDrop>(k));
    for (unsigned b = 0; b < kDetourBuckets; ++b) t.buckets[b] += r->counters.bucket(b);
    t.exit_detours += r->counters.exit_detours();
  }
  return t;
}

uint64_t dibs_port_detours(const Runtime& rt, uint16_t p) {
  const SwitchRuntime& sw = rt.switches[rt.ports[p]->switch_index];
  if (!sw.dibs) return 0;
  uint64_t n = 0;
  for (const auto& w : rt.workers) {
    const DibsRules* r = sw.index < w->dibs.size() ? w->dibs[sw.index].get() : nullptr;
    if (r != nullptr) n += r->counters.detours(sw.dibs->local[p]);
  }
  return n;
}

}  // namespace sluice
