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
  if (!r.expect_map(e, {"mode", "xoff", "alpha", "hysteresis", "reserve", "headroom", "quanta",
                        "priorities"}))
    return;
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
  if (auto f = r.field(e, "reserve", Need::kOptional))
    set(r.size(*f, 0, UINT64_MAX), &out->reserve_bytes);
  if (auto f = r.field(e, "headroom", Need::kOptional))
    set(r.size(*f, 0, UINT64_MAX), &out->headroom_bytes);
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

// A port takes part in its switch's PFC / PAUSE unless it says pfc: false;
// a map gives it its own thresholds (and keeps it in).
void parse_port_pfc(YamlReader& r, const Field& f, PortConfig* port) {
  PortPfcConfig* out = &port->pfc;
  if (!f.node.IsMap()) {
    set(r.boolean(f), &out->enabled);
    return;
  }
  if (!r.expect_map(f, {"xoff", "alpha", "hysteresis", "reserve", "headroom"})) return;
  if (auto x = r.field(f, "xoff", Need::kOptional)) {
    if (x->node.IsScalar() && x->node.Scalar() == "dynamic") {
      out->dynamic = true;
    } else if (auto v = r.size(*x, 1, UINT64_MAX)) {
      out->dynamic = false;
      out->xoff_bytes = *v;
    }
  }
  if (auto x = r.field(f, "alpha", Need::kOptional))
    if (auto v = r.real(*x, 0.0, INFINITY)) out->alpha = *v;
  if (auto x = r.field(f, "hysteresis", Need::kOptional))
    if (auto v = r.size(*x, 0, UINT64_MAX)) out->hysteresis_bytes = *v;
  if (auto x = r.field(f, "reserve", Need::kOptional))
    if (auto v = r.size(*x, 0, UINT64_MAX)) out->reserve_bytes = *v;
  if (auto x = r.field(f, "headroom", Need::kOptional))
    if (auto v = r.size(*x, 0, UINT64_MAX)) out->headroom_bytes = *v;
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

// A port's own thresholds need the switch's PFC and a dynamic threshold for
// alpha; what the ports set aside (headroom and reserve, once per port as
// the public simulators' MMU counts them) must leave some of the buffer.
void validate_port_pfc(ConfigCheck& k, size_t s) {
  const SwitchConfig& sw = k.config().switches[s];
  uint64_t set_aside = 0;
  for (size_t p = 0; p < sw.ports.size(); ++p) {
    const PortPfcConfig& pp = sw.ports[p].pfc;
    const std::string key = port_key(s, p) + ".pfc";
    if (!pp.enabled) continue;
    const PfcConfig c = port_pfc(sw.pfc, pp);
    // On a BFC switch PFC runs on the host-facing ports only.
    const bool runs = sw.pfc.mode != PfcGenerationMode::kOff &&
                      !(sw.bfc.enabled && sw.ports[p].role == PortRole::kSwitch);
    if (runs) set_aside += c.headroom_bytes + c.reserve_bytes;
    if (k.has_error_under(key)) continue;
    const bool own = pp.dynamic || pp.xoff_bytes || pp.alpha || pp.hysteresis_bytes ||
                     pp.reserve_bytes || pp.headroom_bytes;
    if (own && sw.pfc.mode == PfcGenerationMode::kOff) {
      k.error(key, "a port's own PFC settings need its switch's pfc: mode pfc or pause");
      continue;
    }
    if (c.headroom_bytes != 0 && sw.pfc.mode == PfcGenerationMode::kPause)
      k.error(key + ".headroom", "headroom is counted per priority: it needs mode pfc, not pause");
    if (pp.alpha && !c.dynamic)
      k.error(key + ".alpha", "\"alpha\" applies only to a dynamic threshold (xoff: dynamic, "
                              "here or in the switch's pfc)");
  }
  if (sw.pfc.mode != PfcGenerationMode::kOff && set_aside >= sw.buffer.size_bytes)
    k.error(switch_key(s) + ".pfc",
            "the ports' PFC headroom and reserve set aside " + std::to_string(set_aside) +
                " bytes, the whole buffer (" + std::to_string(sw.buffer.size_bytes) +
                " bytes): nothing is left to share");
}

// PFC pauses priorities, PAUSE the whole port: priorities must mean
// something to the mode, and a PFC switch must have a lossless priority
// that its class map puts data in.
void validate_pfc(ConfigCheck& k, size_t s) {
  const SwitchConfig& sw = k.config().switches[s];
  validate_port_pfc(k, s);
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
