#include "switch/mechanisms/floodgate/floodgate_builder.h"

#include <algorithm>

namespace sluice {
namespace {

uint64_t bdp_bytes(uint64_t rate_bps, uint64_t rtt_ns, double factor) {
  return static_cast<uint64_t>(factor * static_cast<double>(rate_bps) *
                               static_cast<double>(rtt_ns) / 8e9);
}

// Dense numbering of the switch's switch-facing and host ports, and the
// lcore that owns the former (one lcore: config_validate refuses a split).
void number_ports(const Runtime& rt, const SwitchRuntime& sw, FloodgateRuntime& fg) {
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

std::string check_one_owner(const Runtime& rt, const SwitchRuntime& sw,
                            const FloodgateRuntime& fg) {
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

FloodgateSwitchTotals floodgate_switch_totals(const Runtime& rt, const SwitchRuntime& sw) {
  FloodgateSwitchTotals t;
  const FloodgateSwitch& f = *sw.fg->state;
  const DstWindows& w = f.windows();
  t.windows_in_use = w.in_use();
  t.window_outstanding_bytes = w.outstanding_bytes();
  t.voqs_in_use = f.voqs().in_use();
  t.voq_packets = f.voqs().packets();
  t.voq_bytes = f.voqs().bytes();
  t.peak_voq_bytes = f.peak_voq_bytes.get();
  t.held_packets = f.held_packets.get();
  t.uncontrolled_packets = f.uncontrolled_packets.get();
  t.voq_shared = f.voqs().shared.get();
  t.voq_marks = f.voq_marks.get();
  t.invalid_credit_bytes = w.invalid_credit_bytes.get();
  t.table_full = w.table_full.get();
  for (const auto& wk : rt.workers) {
    if (const CreditAggregator* a = wk->fg_credits[sw.index].get())
      t.credit_withheld_bytes += a->withheld_bytes.get();
  }
  if (const DstPauseTracker* d = f.dst_pause()) {
    t.dst_paused = d->paused();
    t.dst_pause_untracked = d->untracked.get();
  }
  if (const SyncReceiver* r = f.sync_receiver()) {
    t.sync_healed_data_bytes = r->healed_data_bytes.get();
    t.sync_healed_credit_bytes = r->healed_credit_bytes.get();
    t.sync_behind = r->sync_behind.get();
    t.sync_untracked = r->untracked.get() + f.sync_sender()->untracked.get();
  }
  return t;
}

std::string create_floodgate(Runtime& rt) {
  for (auto& w : rt.workers) w->fg_credits.resize(rt.switches.size());
  for (SwitchRuntime& sw : rt.switches) {
    const FloodgateConfig& f = sw.cfg->floodgate;
    if (!f.enabled || sw.ports.empty()) continue;
    auto fg = std::make_unique<FloodgateRuntime>();
    number_ports(rt, sw, *fg);
    if (std::string err = check_one_owner(rt, sw, *fg); !err.empty()) return err;
    SharedBuffer* buf = rt.workers[fg->owner_slot]->buffers[sw.index].get();
    fg->state = std::make_unique<FloodgateSwitch>(floodgate_switch_config(*sw.cfg), buf);
    fg->sync_interval_ns = f.sync ? f.sync_interval_ns : 0;
    for (uint16_t g : fg->switch_ports) {
      PortRuntime& p = *rt.ports[g];
      p.fg_initial_window =
          initial_window_bytes(p.cfg->rate_bps, p.cfg->hop_rtt_ns, f.alpha, f.credit_interval_ns);
    }
    const auto ingress_count = static_cast<uint32_t>(fg->switch_ports.size());
    for (auto& w : rt.workers) {
      const bool owns = std::any_of(sw.ports.begin(), sw.ports.end(),
                                    [&](uint16_t g) { return rt.ports[g]->owner_slot == w->slot; });
      if (owns && ingress_count != 0)
        w->fg_credits[sw.index] = std::make_unique<CreditAggregator>(
            ingress_count, f.credit_threshold_bytes, f.credit_interval_ns);
    }
    sw.fg = std::move(fg);
  }
  return "";
}

}  // namespace sluice
