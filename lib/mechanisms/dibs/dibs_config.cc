#include "lib/mechanisms/dibs/dibs_config.h"

#include <string>

#include "lib/config/config_check.h"
#include "lib/config/config_section.h"
#include "lib/config/yaml_reader.h"

namespace sluice {
namespace {

// DIBS; the section's presence turns it on unless it says enabled: false.
// max_detours stops at 255: the shim's count is one byte and saturates.
void parse_dibs(YamlReader& r, const Field& e, SwitchConfig* sw) {
  DibsConfig* out = &sw->dibs;
  if (!r.expect_map(e, {"enabled", "policy", "max_detours"})) return;
  out->enabled = true;
  if (auto f = r.field(e, "enabled", Need::kOptional)) set(r.boolean(*f), &out->enabled);
  if (auto f = r.field(e, "policy", Need::kOptional)) {
    set(r.choice<DibsPolicy>(
            *f, {{"random", DibsPolicy::kRandom}, {"load_aware", DibsPolicy::kLoadAware}}),
        &out->policy);
  }
  if (auto f = r.field(e, "max_detours", Need::kOptional))
    set(r.integer(*f, 0, 255), &out->max_detours);
}

// DIBS turns drops into detours, so it needs a fabric that drops (paper
// section 3: lossy, with ECN-based congestion control) and somewhere to
// detour to. One switch-facing port is enough: packets toward hosts can
// bounce back up it (the paper's linear-topology remark, section 7).
void validate_dibs(ConfigCheck& k, size_t s) {
  const SwitchConfig& sw = k.config().switches[s];
  if (!sw.dibs.enabled) return;
  const std::string dpath = switch_key(s) + ".dibs";
  if (sw.pfc.mode != PfcGenerationMode::kOff) {
    k.error(dpath, std::string("dibs is for lossy fabrics: with pfc mode ") +
                       (sw.pfc.mode == PfcGenerationMode::kPfc ? "pfc" : "pause") +
                       " the switch pauses its upstream instead of dropping, so there would be "
                       "no drop to detour");
  }
  if (sw.bfc.enabled) {
    k.error(dpath,
            "dibs is for lossy fabrics: bfc pauses flows hop by hop instead of dropping, so "
            "there would be no drop to detour");
  }
  if (sw.floodgate.enabled) {
    k.error(dpath,
            "dibs and floodgate on one switch are not supported: a detoured packet is debited "
            "from its destination's window here and credited by the neighbour it was detoured "
            "to, off its path, so the window would no longer bound the bytes in flight toward "
            "that destination");
  }
  bool switch_facing = false;
  for (const PortConfig& port : sw.ports) switch_facing |= port.role == PortRole::kSwitch;
  if (!switch_facing && !sw.ports.empty()) {
    k.error(dpath, "dibs detours only to switch-facing ports, and switch \"" + sw.name +
                       "\" has none (role: switch)");
  }
}

}  // namespace

const ConfigSections kDibsSections{
    .in_switch = {.key = "dibs", .parse = parse_dibs, .validate = validate_dibs},
};

}  // namespace sluice
