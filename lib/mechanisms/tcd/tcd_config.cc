#include "lib/mechanisms/tcd/tcd_config.h"

#include <optional>
#include <string>

#include "lib/config/config_check.h"
#include "lib/config/config_section.h"
#include "lib/config/yaml_reader.h"
#include "lib/mechanisms/tcd/tcd_params.h"

namespace sluice {
namespace {

// TCD; the section's presence turns it on unless it says enabled: false.
// Codepoints are ECN-capable (1..3) and distinct.
void parse_tcd(YamlReader& r, const Field& e, SwitchConfig* sw) {
  TcdConfig* out = &sw->tcd;
  if (!r.expect_map(e, {"enabled", "q_th", "max_t_on", "ce_codepoint", "ue_codepoint",
                        "queue_falling", "falling_interval"})) {
    return;
  }
  out->enabled = true;
  if (auto f = r.field(e, "enabled", Need::kOptional)) set(r.boolean(*f), &out->enabled);
  if (auto f = r.field(e, "q_th", Need::kOptional))
    set(r.size(*f, 1, UINT64_MAX), &out->q_th_bytes);
  if (auto f = r.field(e, "max_t_on", Need::kOptional))
    set(r.duration(*f, 1, 10'000'000'000), &out->max_t_on_ns);
  std::optional<Field> ce_f = r.field(e, "ce_codepoint", Need::kOptional);
  std::optional<Field> ue_f = r.field(e, "ue_codepoint", Need::kOptional);
  std::optional<uint64_t> ce, ue;
  if (ce_f) set(ce = r.integer(*ce_f, 1, 3), &out->ce_codepoint);
  if (ue_f) set(ue = r.integer(*ue_f, 1, 3), &out->ue_codepoint);
  if ((ce || ue) && out->ce_codepoint == out->ue_codepoint) {
    const Field& at = ue ? *ue_f : *ce_f;
    r.error(at.node, at.path,
            "expected ce_codepoint and ue_codepoint to differ, both are " +
                std::to_string(out->ce_codepoint));
  }
  if (auto f = r.field(e, "queue_falling", Need::kOptional))
    set(r.boolean(*f), &out->queue_falling);
  if (auto f = r.field(e, "falling_interval", Need::kOptional))
    set(r.duration(*f, 1, 1'000'000'000), &out->falling_interval_ns);
}

// TCD replaces the enqueue ECN marker on its switch and takes q_th from
// its step threshold; it needs pauses to tell congestion from backpressure
// (docs/mechanisms/tcd.md, "Configuration").
void validate_tcd(ConfigCheck& k, size_t s) {
  const SwitchConfig& sw = k.config().switches[s];
  if (!sw.tcd.enabled) return;
  const std::string tpath = switch_key(s) + ".tcd";
  for (size_t p = 0; p < sw.ports.size(); ++p) {
    if (sw.ports[p].ecn)
      k.error(port_key(s, p) + ".ecn",
              "a port's own ecn is refused on a tcd switch: TCD marks at dequeue by the "
              "switch's ecn step threshold (or tcd.q_th)");
  }
  if (sw.tm.ecn.mode == EcnMode::kRed) {
    k.error(tpath,
            "tcd replaces ECN marking at enqueue on its switch, so ecn mode red would never "
            "mark: use ecn mode step (its k is tcd's default q_th) or off with tcd.q_th");
    return;
  }
  if (tcd_q_th_bytes(sw) == 0 && !k.has_error(tpath + ".q_th")) {
    k.error(tpath,
            "tcd needs q_th: its default is the ECN step threshold, and ecn gives no k (set "
            "tcd.q_th, or ecn: {mode: step, k: ...})");
  }
  for (const PortConfig& port : sw.ports) {
    if (tcd_pause_source(sw, port) != TcdPauseSource::kNone) return;
  }
  k.note(tpath,
         "tcd without pfc or bfc: nothing pauses this switch's ports, so TCD marks CE like "
         "DCTCP step marking at q_th (at dequeue) and never marks UE");
}

}  // namespace

const ConfigSections kTcdSections{
    .in_switch = {.key = "tcd", .parse = parse_tcd, .validate = validate_tcd},
};

}  // namespace sluice
