#include "lib/mechanisms/bfc/bfc_config.h"

#include <string>
#include <vector>

#include "lib/config/config_check.h"
#include "lib/config/config_section.h"
#include "lib/config/yaml_reader.h"

namespace sluice {
namespace {

std::vector<std::string> names(YamlReader& r, const Field& f) {
  std::vector<std::string> out;
  if (f.node.IsScalar()) {
    if (auto s = r.string(f)) out.push_back(*s);
    return out;
  }
  if (auto items = r.list(f)) {
    for (const Field& item : *items) {
      if (auto s = r.string(item)) out.push_back(*s);
    }
  }
  return out;
}

// {from: [ports], to: [ports]}; a single name may stand for a list of one.
void parse_elided(YamlReader& r, const Field& e, BfcElidedPairs* out) {
  out->line = YamlReader::line_of(e.node);
  if (!r.expect_map(e, {"from", "to"})) return;
  if (auto f = r.field(e, "from", Need::kRequired)) out->from = names(r, *f);
  if (auto f = r.field(e, "to", Need::kRequired)) out->to = names(r, *f);
}

// BFC; the section's presence turns it on unless it says enabled: false.
void parse_bfc(YamlReader& r, const Field& e, SwitchConfig* sw) {
  BfcConfig* out = &sw->bfc;
  if (!r.expect_map(e, {"enabled", "assignment", "flow_table_factor", "sticky", "bitmap_interval",
                        "th", "no_backpressure"})) {
    return;
  }
  out->enabled = true;
  if (auto f = r.field(e, "enabled", Need::kOptional)) set(r.boolean(*f), &out->enabled);
  if (auto f = r.field(e, "assignment", Need::kOptional)) {
    set(r.choice<BfcAssignmentKind>(*f, {{"dynamic", BfcAssignmentKind::kDynamic},
                                         {"stochastic", BfcAssignmentKind::kStochastic},
                                         {"single", BfcAssignmentKind::kSingle}}),
        &out->assignment);
  }
  if (auto f = r.field(e, "flow_table_factor", Need::kOptional))
    set(r.integer(*f, 1, 10'000), &out->flow_table_factor);
  if (auto f = r.field(e, "sticky", Need::kOptional))
    set(r.duration(*f, 1, UINT64_MAX), &out->sticky_ns);
  if (auto f = r.field(e, "bitmap_interval", Need::kOptional))
    set(r.duration(*f, 1, UINT64_MAX), &out->bitmap_interval_ns);
  if (auto f = r.field(e, "th", Need::kOptional)) set(r.duration(*f, 1, UINT64_MAX), &out->th_ns);
  if (auto f = r.field(e, "no_backpressure", Need::kOptional)) {
    if (auto items = r.list(*f)) {
      for (const Field& item : *items) parse_elided(r, item, &out->no_backpressure.emplace_back());
    }
  }
}

// BFC picks each flow's queue itself and sizes Th from the port's rate;
// no_backpressure names ports of its switch.
void validate_bfc(ConfigCheck& k, size_t s) {
  const SwitchConfig& sw = k.config().switches[s];
  if (!sw.bfc.enabled) return;
  const std::string bpath = switch_key(s) + ".bfc";
  if (sw.tm.class_mapping == ClassMapping::kDscp) {
    k.error(bpath, "bfc assigns flows to queues itself: class_map must be fifo");
  }
  // Th = hop_rtt x rate / N_active assumes the active queues share the port
  // fairly (paper 3.3.1-3.3.2); strict priority would rank flows by the
  // queue number dynamic assignment happened to give them.
  if (sw.tm.scheduler == SchedulerKind::kStrictPriority) {
    k.error(switch_key(s) + ".scheduler",
            "bfc needs a round-robin scheduler among its queues (Th = hop_rtt x rate / active "
            "queues): scheduler must be drr");
  }
  for (size_t p = 0; p < sw.ports.size(); ++p) {
    if (sw.ports[p].rate_bps == 0) {
      k.error(port_key(s, p) + ".rate",
              "bfc needs the port's rate (Th = hop_rtt x rate / active queues): expected a rate "
              "above 0");
    }
  }
  for (size_t i = 0; i < sw.bfc.no_backpressure.size(); ++i) {
    const BfcElidedPairs& pairs = sw.bfc.no_backpressure[i];
    const std::string ipath = item_key(bpath, "no_backpressure", i);
    for (const auto* side : {&pairs.from, &pairs.to}) {
      const char* key = side == &pairs.from ? ".from" : ".to";
      for (const std::string& name : *side) {
        if (!k.find_port(sw.name, name))
          k.error(ipath + key, "unknown port \"" + name + "\" in switch \"" + sw.name + "\"");
      }
    }
  }
}

}  // namespace

const ConfigSections kBfcSections{
    .in_switch = {.key = "bfc", .parse = parse_bfc, .validate = validate_bfc},
};

}  // namespace sluice
