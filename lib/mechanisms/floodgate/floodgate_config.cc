#include "lib/mechanisms/floodgate/floodgate_config.h"

#include <string>

#include "lib/config/config_check.h"
#include "lib/config/config_section.h"
#include "lib/config/yaml_reader.h"

namespace sluice {
namespace {

// Floodgate; the section's presence turns it on unless it says enabled: false.
void parse_floodgate(YamlReader& r, const Field& e, SwitchConfig* sw) {
  FloodgateConfig* out = &sw->floodgate;
  if (!r.expect_map(
          e, {"enabled", "alpha", "credit_interval", "credit_threshold", "voqs", "voq_packets",
              "max_destinations", "delay_credit", "delay_credit_factor", "dst_pause",
              "dst_pause_factor", "dst_pause_hysteresis", "voq_ecn", "sync", "sync_interval"})) {
    return;
  }
  out->enabled = true;
  if (auto f = r.field(e, "enabled", Need::kOptional)) set(r.boolean(*f), &out->enabled);
  if (auto f = r.field(e, "alpha", Need::kOptional)) set(r.real(*f, 0.0, 1000.0), &out->alpha);
  if (auto f = r.field(e, "credit_interval", Need::kOptional))
    set(r.duration(*f, 1, 1'000'000'000), &out->credit_interval_ns);
  if (auto f = r.field(e, "credit_threshold", Need::kOptional))
    set(r.size(*f, 1, uint64_t{1} << 30), &out->credit_threshold_bytes);
  if (auto f = r.field(e, "voqs", Need::kOptional)) set(r.integer(*f, 1, 1024), &out->voqs);
  if (auto f = r.field(e, "voq_packets", Need::kOptional))
    set(r.integer(*f, 1, 1 << 22), &out->voq_packets);
  if (auto f = r.field(e, "max_destinations", Need::kOptional))
    set(r.integer(*f, 1, 1 << 20), &out->max_destinations);
  if (auto f = r.field(e, "delay_credit", Need::kOptional)) set(r.boolean(*f), &out->delay_credit);
  if (auto f = r.field(e, "delay_credit_factor", Need::kOptional))
    set(r.real(*f, 0.0, 1000.0), &out->delay_credit_factor);
  if (auto f = r.field(e, "dst_pause", Need::kOptional)) set(r.boolean(*f), &out->dst_pause);
  if (auto f = r.field(e, "dst_pause_factor", Need::kOptional))
    set(r.real(*f, 0.0, 1000.0), &out->dst_pause_factor);
  if (auto f = r.field(e, "dst_pause_hysteresis", Need::kOptional))
    set(r.size(*f, 0, uint64_t{1} << 30), &out->dst_pause_hysteresis_bytes);
  if (auto f = r.field(e, "voq_ecn", Need::kOptional))
    set(r.size(*f, 0, uint64_t{1} << 40), &out->voq_ecn_bytes);
  if (auto f = r.field(e, "sync", Need::kOptional)) set(r.boolean(*f), &out->sync);
  if (auto f = r.field(e, "sync_interval", Need::kOptional))
    set(r.duration(*f, 1, 10'000'000'000), &out->sync_interval_ns);
}

// Floodgate sizes windows from port rates; BFC on the same links would be a
// second hop-by-hop backpressure with its own idea of what is in flight.
void validate_floodgate(ConfigCheck& k, size_t s) {
  const SwitchConfig& sw = k.config().switches[s];
  if (!sw.floodgate.enabled) return;
  const std::string fpath = switch_key(s) + ".floodgate";
  if (sw.bfc.enabled) {
    k.error(fpath,
            "floodgate and bfc on one switch are not supported: both pace the same "
            "switch-facing links hop by hop, and their credits and pauses would not "
            "agree on what is in flight");
  }
  for (size_t p = 0; p < sw.ports.size(); ++p) {
    const PortConfig& port = sw.ports[p];
    const bool needs_rate = port.role == PortRole::kSwitch || sw.floodgate.dst_pause;
    if (needs_rate && port.rate_bps == 0) {
      k.error(port_key(s, p) + ".rate",
              port.role == PortRole::kSwitch
                  ? "floodgate needs a switch-facing port's rate (initial window = alpha x rate x "
                    "hop_rtt + rate x credit_interval): expected a rate above 0"
                  : "floodgate dst_pause needs a host port's rate (threshold = dst_pause_factor x "
                    "rate x hop_rtt): expected a rate above 0");
    }
  }
}

// Floodgate windows are refilled only by the next switch's credit, so a
// link with Floodgate at one end only would stall the windows toward the
// other end after one window of data (or waste credit on a switch that
// ignores it): the whole fabric runs it or none of it does.
void validate_floodgate_link(ConfigCheck& k, const std::string& key, const SwitchConfig& a,
                             const SwitchConfig& b) {
  if (a.floodgate.enabled == b.floodgate.enabled) return;
  const SwitchConfig& on = a.floodgate.enabled ? a : b;
  const SwitchConfig& off = a.floodgate.enabled ? b : a;
  k.error(key, "floodgate on one end of an internal link only: switch \"" + on.name +
                   "\" runs it and \"" + off.name + "\" does not, so \"" + on.name +
                   "\"'s windows toward \"" + off.name +
                   "\" would never be refilled by credit (give every switch of a Floodgate "
                   "fabric a floodgate section)");
}

// A Floodgate switch's windows are one table per switch, written where
// packets toward switch-facing ports are admitted and where credits come
// in: one lcore must own all its switch-facing ports (docs/mechanisms/
// floodgate.md, "One writer").
bool window_writer(const SwitchConfig& sw, const PortConfig& port) {
  return sw.floodgate.enabled && port.role == PortRole::kSwitch;
}

std::string split_windows(const SwitchConfig& sw, const PortConfig& stray,
                          const std::string& others) {
  return "floodgate: switch \"" + sw.name + "\" keeps one window table, so one worker must " +
         "own all its switch-facing ports; " + stray.name + " is not with the others (" + others +
         ")";
}

// Its forward step runs on every port of the switch, on the lcore that
// receives it: it counts what each switch-facing port receives for the
// sync (SyncReceiver), state of the lcore that owns those ports.
std::string forward_receiver(const SwitchConfig& sw, const PortConfig&) {
  if (!sw.floodgate.enabled) return "";
  return "floodgate: switch \"" + sw.name +
         "\" takes a forward step on every port, and counts what its switch-facing ports "
         "receive for the sync on the lcore that owns them";
}

}  // namespace

const ConfigSections kFloodgateSections{
    .in_switch = {.key = "floodgate",
                  .parse = parse_floodgate,
                  .validate = validate_floodgate,
                  .validate_link = validate_floodgate_link,
                  .one_lcore = window_writer,
                  .one_lcore_error = split_windows,
                  .receive_on_owner = forward_receiver},
};

}  // namespace sluice
