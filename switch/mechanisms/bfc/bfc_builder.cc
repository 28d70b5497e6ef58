#include "switch/mechanisms/bfc/bfc_builder.h"

#include <rte_errno.h>
#include <rte_lcore.h>
#include <rte_ring.h>

#include <algorithm>
#include <memory>
#include <vector>

#include "lib/mechanisms/bfc/hop_rtt.h"
#include "lib/common/seeds.h"

namespace sluice {
namespace {

BfcAssignment assignment(BfcAssignmentKind k) {
  switch (k) {
    case BfcAssignmentKind::kStochastic:
      return BfcAssignment::kStochastic;
    case BfcAssignmentKind::kSingle:
      return BfcAssignment::kSingle;
    case BfcAssignmentKind::kDynamic:
      break;
  }
  return BfcAssignment::kDynamic;
}

// A replaying host whose NIC is a BFC NIC (it names its queue in the shim,
// paper 3.3.2).
bool bfc_nic(const PortConfig& pc) { return pc.pcap && pc.nic.mode == NicMode::kBfc; }

// Ports whose peer BFC pauses per queue: a switch, or a BFC NIC. Their
// ingress counts pauses, they get bitmaps, and their hop RTT sizes HRTT.
bool pausable_peer(const PortConfig& pc) { return pc.role == PortRole::kSwitch || bfc_nic(pc); }

// Per-port tables every shard of the switch shares the shape of.
struct SwitchTables {
  std::unique_ptr<bool[]> facing;  // switch-facing ports of this switch
  std::vector<uint64_t> rates;
};

SwitchTables tables_of(const Runtime& rt, const SwitchRuntime& sw) {
  SwitchTables t{std::make_unique<bool[]>(rt.ports.size()),
                 std::vector<uint64_t>(rt.ports.size(), 0)};
  for (uint16_t g : sw.ports) {
    t.facing[g] = pausable_peer(*rt.ports[g]->cfg);
    t.rates[g] = rt.ports[g]->cfg->rate_bps;
  }
  return t;
}

std::string create_shard(Runtime& rt, const SwitchRuntime& sw, WorkerRuntime& w,
                         const SwitchTables& t) {
  const BfcConfig& bc = sw.cfg->bfc;
  const uint32_t queues = sw.cfg->tm.queues_per_port;
  // The egress ports this lcore owns: one flow-table slice each.
  std::unique_ptr<bool[]> owned = std::make_unique<bool[]>(rt.ports.size());
  bool any = false;
  for (uint16_t g : sw.ports) {
    owned[g] = rt.ports[g]->owner_slot == w.slot;
    any = any || owned[g];
  }
  if (!any) return "";
  const std::span<const bool> facing(t.facing.get(), rt.ports.size());
  const uint64_t hop_rtt = bfc_hop_rtt_ns(rt, sw);
  BfcShardConfig c;
  c.mode = assignment(bc.assignment);
  c.switch_facing = facing;
  c.rate_bps = t.rates;
  c.egress_ports = std::span<const bool>(owned.get(), rt.ports.size());
  c.queues_per_port = queues;
  c.flow_table_factor = bc.flow_table_factor;
  c.hop_rtt_ns = hop_rtt;
  c.sticky_ns = bfc_sticky_ns(bc.sticky_ns, hop_rtt);
  c.th_ns = bfc_th_time_ns(bc.th_ns, hop_rtt);
  c.rng_seed = derive_seed(rt.config.seed, SeedStream::kBfc, (uint64_t{w.slot} << 32) | sw.index);
  const uint64_t interval = bfc_bitmap_interval_ns(bc.bitmap_interval_ns, hop_rtt);
  try {
    auto shard = std::make_unique<BfcShard>(c);
    for (const BfcElidedPairs& pairs : bc.no_backpressure) {
      for (const std::string& from : pairs.from) {
        for (const std::string& to : pairs.to) {
          const int in = find_port(rt, PortRef{sw.cfg->name, from});
          const int out = find_port(rt, PortRef{sw.cfg->name, to});
          if (in < 0 || out < 0) return sw.cfg->name + ": bfc.no_backpressure: unknown port";
          shard->counters().elide_pair(static_cast<uint16_t>(in), static_cast<uint16_t>(out));
        }
      }
    }
    w.bfc[sw.index] = std::move(shard);
    w.bfc_bitmaps[sw.index] = std::make_unique<BitmapSchedule>(facing, interval, 0);
  } catch (const std::exception& e) {
    return sw.cfg->name + ": BFC: " + e.what();
  }
  return "";
}

}  // namespace

uint64_t bfc_hop_rtt_ns(const Runtime& rt, const SwitchRuntime& sw) {
  std::vector<uint64_t> rtts;
  std::unique_ptr<bool[]> facing = std::make_unique<bool[]>(sw.ports.size());
  for (uint16_t g : sw.ports) {
    facing[rtts.size()] = pausable_peer(*rt.ports[g]->cfg);
    rtts.push_back(rt.ports[g]->cfg->hop_rtt_ns);
  }
  return upstream_hop_rtt_ns(rtts, std::span<const bool>(facing.get(), rtts.size()));
}

BfcSwitchTotals bfc_switch_totals(const Runtime& rt, const SwitchRuntime& sw) {
  BfcSwitchTotals t;
  for (const auto& w : rt.workers) {
    const BfcShard* s = w->bfc[sw.index].get();
    if (s == nullptr) continue;
    t.flow_table_entries += s->table().size();
    t.flow_table_occupied += s->table().occupied();
    t.index_collisions += s->table().index_collisions();
    t.queue_collisions += s->assigner().queue_collisions();
  }
  return t;
}

std::string create_bfc(Runtime& rt) {
  for (auto& w : rt.workers) {
    w->bfc.resize(rt.switches.size());
    w->bfc_bitmaps.resize(rt.switches.size());
  }
  // Our slots are the shard bytes our frames carry; a peer accepts 0..63.
  if (rt.workers.size() > UpstreamPauseState::kMaxShards)
    return "BFC supports at most 64 worker lcores (shards)";
  for (SwitchRuntime& sw : rt.switches) {
    if (!sw.cfg->bfc.enabled) continue;
    sw.bfc_on = true;
    const SwitchTables t = tables_of(rt, sw);
    for (auto& w : rt.workers) {
      if (std::string err = create_shard(rt, sw, *w, t); !err.empty()) return err;
    }
    for (uint16_t g : sw.ports) {
      PortRuntime& p = *rt.ports[g];
      p.bfc = rt.workers[p.owner_slot]->bfc[sw.index].get();
      p.bfc_nic = bfc_nic(*p.cfg);
      if (p.cfg->role != PortRole::kSwitch) continue;
      p.bfc_peer = true;
      p.bfc_upstream = std::make_unique<UpstreamPauseState>(p.tm.get());
    }
  }
  return "";
}

}  // namespace sluice
