#include "lib/mechanisms/pfc/pfc_config.h"

#include <cmath>
#include <string>

#include "lib/config/config_check.h"
#include "lib/config/config_section.h"
#include "lib/config/yaml_reader.h"
#include "lib/mechanisms/pfc/pfc_classes.h"
#include "lib/tm/class_map.h"

namespace sluice {
namespace {

// PFC / PAUSE generation; xoff is a size, or "dynamic" (alpha x free buffer).
void parse_pfc(YamlReader& r, const Field& e, SwitchConfig* sw) {
  PfcConfig* out = &sw->pfc;
  if (!r.expect_map(e, {"mode", "xoff", "alpha", "hysteresis", "quanta", "priorities"})) return;
  if (auto f = r.field(e, "mode", Need::kRequired)) {
    set(r.choice<PfcGenerationMode>(*f, {{"off", PfcGenerationMode::kOff},
                                         {"pfc", PfcGenerationMode::kPfc},
                                         {"pause", PfcGenerationMode::kPause}}),
        &out->mode);
  }
  if (auto f = r.field(e, "xoff", Need::kOptional)) {
    if (f->node.IsScalar() && f->node.Scalar() == "dynamic") {
      out->dynamic = true;
    } else {
      set(r.size(*f, 1, UINT64_MAX), &out->xoff_bytes);
    }
  }
  if (auto f = r.field(e, "alpha", Need::kOptional)) {
    if (out->dynamic)
      set(r.real(*f, 0.0, INFINITY), &out->alpha);
    else
      r.error(f->node, f->path, "\"alpha\" applies only to xoff: dynamic");
  }
  if (auto f = r.field(e, "hysteresis", Need::kOptional))
    set(r.size(*f, 0, UINT64_MAX), &out->hysteresis_bytes);
  if (auto f = r.field(e, "quanta", Need::kOptional)) set(r.integer(*f, 1, 65535), &out->quanta);
  if (auto f = r.field(e, "priorities", Need::kOptional)) {
    if (auto items = r.list(*f)) {
      out->priorities = 0;
      for (const Field& item : *items) {
        if (auto prio = r.integer(item, 0, 7)) out->priorities |= uint8_t(1u << *prio);
      }
    }
  }
}

// A port takes part in its switch's PFC / PAUSE unless it says pfc: false.
void parse_port_pfc(YamlReader& r, const Field& f, PortConfig* port) {
  set(r.boolean(f), &port->pfc);
}

// The PFC priorities data can have: those of the queues the class map uses.
uint8_t data_priorities(const TrafficManagerConfig& tm) {
  uint8_t carried = 0;
  for (uint8_t dscp = 0; dscp < 64; ++dscp) {
    const uint16_t q = queue_for_class(tm.class_mapping, dscp, tm.queues_per_port);
    carried |= static_cast<uint8_t>(1u << priority_of_queue(q, tm.queues_per_port));
  }
  return carried;
}

std::string priority_list(uint8_t mask) {
  std::string out;
  for (unsigned p = 0; p < kPfcClasses; ++p) {
    if (!((mask >> p) & 1)) continue;
    out += (out.empty() ? "" : ", ") + std::to_string(p);
  }
  return out;
}

// PFC pauses priorities, PAUSE the whole port: priorities must mean
// something to the mode, and a PFC switch must have a lossless priority
// that its class map puts data in.
void validate_pfc(ConfigCheck& k, size_t s) {
  const SwitchConfig& sw = k.config().switches[s];
  const std::string key = switch_key(s) + ".pfc.priorities";
  if (!k.written(key) || k.has_error_under(key)) return;
  if (sw.pfc.mode == PfcGenerationMode::kPause) {
    k.error(key, "priorities apply to mode pfc: PAUSE (802.3x) stops the whole port");
    return;
  }
  if (sw.pfc.mode != PfcGenerationMode::kPfc) return;
  if ((sw.pfc.priorities & data_priorities(sw.tm)) != 0) return;
  k.error(key, sw.tm.class_mapping == ClassMapping::kDscp
                   ? "no listed priority carries data: with " +
                         std::to_string(sw.tm.queues_per_port) +
                         " queues class_map dscp uses only priorities " +
                         priority_list(data_priorities(sw.tm)) + ", so nothing would be paused"
                   : "no listed priority carries data: class_map fifo puts every packet in "
                     "priority 0, so nothing would be paused");
}

}  // namespace

const ConfigSections kPfcSections{
    .in_switch = {.key = "pfc", .parse = parse_pfc, .validate = validate_pfc},
    .in_port = {.key = "pfc", .parse = parse_port_pfc},
};

}  // namespace sluice
