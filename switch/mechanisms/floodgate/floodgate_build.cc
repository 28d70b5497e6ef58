#include "switch/mechanisms/floodgate/floodgate_module.h"

#include <algorithm>

namespace sluice {
namespace {

uint64_t bdp_bytes(uint64_t rate_bps, uint64_t rtt_ns, double factor) {
  return static_cast<uint64_t>(factor * static_cast<double>(rate_bps) *
                               static_cast<double>(rtt_ns) / 8e9);
}

// Dense numbering of the switch's switch-facing and host ports, and the
// lcore that owns the former (one lcore: config_validate refuses a split).
void number_ports(const Runtime& rt, const SwitchRuntime& sw, FgSwitch& fg) {
  fg.switch_index.assign(rt.ports.size(), kNoFgIndex);
  fg.host_index.assign(rt.ports.size(), kNoFgIndex);
  fg.owner_slot = rt.ports[sw.ports[0]]->owner_slot;
  bool owner_set = false;
  for (uint16_t g : sw.ports) {
    const PortRuntime& p = *rt.ports[g];
    if (p.cfg->role == PortRole::kSwitch) {
      if (!owner_set) fg.owner_slot = p.owner_slot;
      owner_set = true;
      fg.switch_index[g] = static_cast<uint32_t>(fg.switch_ports.size());
      fg.switch_ports.push_back(g);
    } else {
      fg.host_index[g] = static_cast<uint32_t>(fg.host_ports.size());
      fg.host_ports.push_back(g);
    }
  }
}

std::string check_one_owner(const Runtime& rt, const SwitchRuntime& sw, const FgSwitch& fg) {
  for (uint16_t g : fg.switch_ports) {
    if (rt.ports[g]->owner_slot != fg.owner_slot)
      return sw.cfg->name + ": floodgate: the switch-facing ports must belong to one worker";
  }
  return "";
}

// The Floodgate settings of switch `sw` as the rules take them (bytes and
// ns from the configuration's factors and the ports' rates and hop RTTs).
FloodgateSwitchConfig floodgate_switch_config(const SwitchConfig& sw) {
  const FloodgateConfig& f = sw.floodgate;
  uint64_t max_rate = 0, max_rtt = 0, host_bdp = 0, switch_rtt = 0;
  for (const PortConfig& p : sw.ports) {
    max_rate = std::max(max_rate, p.rate_bps);
    max_rtt = std::max(max_rtt, p.hop_rtt_ns);
    if (p.role == PortRole::kSwitch) switch_rtt = std::max(switch_rtt, p.hop_rtt_ns);
    if (p.role != PortRole::kSwitch)
      host_bdp = std::max(host_bdp, bdp_bytes(p.rate_bps, p.hop_rtt_ns, 1.0));
  }
  FloodgateSwitchConfig c;
  c.max_destinations = f.max_destinations;
  c.voqs = f.voqs;
  c.voq_packets = f.voq_packets;
  c.delay_credit_bytes =
      f.delay_credit ? std::max<uint64_t>(1, bdp_bytes(max_rate, max_rtt, f.delay_credit_factor))
                     : 0;
  c.voq_ecn_bytes = f.voq_ecn_bytes;
  c.dst_pause = f.dst_pause;
  c.dst_pause_bytes = static_cast<uint64_t>(f.dst_pause_factor * static_cast<double>(host_bdp));
  c.dst_pause_hysteresis_bytes = f.dst_pause_hysteresis_bytes;
  c.sync = f.sync;
  // Credit sent within two hop RTTs of a sync's arrival may still be on its
  // way up, or have left after the upstream sent the sync.
  c.sync_cut_ns = 2 * std::max<uint64_t>(switch_rtt, 1);
  return c;
}

}  // namespace

// Floodgate's state of a built Runtime: per switch with a floodgate
// section, the window / VOQ state on the lcore that owns its switch-facing
// ports, the dense port numbering the rules use, each port's initial
// window, and a credit aggregator on every lcore that owns one of the
// switch's ports. Needs the traffic managers and shared buffers.
std::string FloodgateModule::build(Runtime& rt) {
  bool any = false;
  for (const SwitchRuntime& sw : rt.switches) any |= sw.cfg->floodgate.enabled && !sw.ports.empty();
  if (!any) return "";
  auto s = std::make_unique<FloodgateModuleState>();
  s->switches.resize(rt.switches.size());
  s->ports = std::make_unique<FgPort[]>(rt.ports.size());
  s->frames.resize(rt.workers.size());
  for (auto& f : s->frames) f = std::vector<FgFrames>(rt.ports.size());
  for (SwitchRuntime& sw : rt.switches) {
    const FloodgateConfig& f = sw.cfg->floodgate;
    if (!f.enabled || sw.ports.empty()) continue;
    sw.ingress_meta = true;
    auto fg = std::make_unique<FgSwitch>();
    number_ports(rt, sw, *fg);
    if (std::string err = check_one_owner(rt, sw, *fg); !err.empty()) return err;
    SharedBuffer* buf = rt.workers[fg->owner_slot]->buffers[sw.index].get();
    fg->state = std::make_unique<FloodgateSwitch>(floodgate_switch_config(*sw.cfg), buf);
    fg->sync_interval_ns = f.sync ? f.sync_interval_ns : 0;
    for (uint16_t g : sw.ports) {
      PortRuntime& p = *rt.ports[g];
      p.module[kId] = &s->ports[g];
      p.in_steps |= 1u << kId;  // its forward step: destination, size, sync counts
    }
    for (uint16_t g : fg->switch_ports) {
      PortRuntime& p = *rt.ports[g];
      s->ports[g].initial_window =
          initial_window_bytes(p.cfg->rate_bps, p.cfg->hop_rtt_ns, f.alpha, f.credit_interval_ns);
    }
    const auto ingress_count = static_cast<uint32_t>(fg->switch_ports.size());
    fg->credits.resize(rt.workers.size());
    for (auto& w : rt.workers) {
      const bool owns = std::any_of(sw.ports.begin(), sw.ports.end(),
                                    [&](uint16_t g) { return rt.ports[g]->owner_slot == w->slot; });
      if (owns && ingress_count != 0)
        fg->credits[w->slot] = std::make_unique<CreditAggregator>(
            ingress_count, f.credit_threshold_bytes, f.credit_interval_ns);
    }
    sw.module[kId] = fg.get();
    s->switches[sw.index] = std::move(fg);
  }
  rt.control_rings = true;
  rt.module_state[kId] = std::move(s);
  return "";
}

}  // namespace sluice
