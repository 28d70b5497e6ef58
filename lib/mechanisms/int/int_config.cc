#include "lib/mechanisms/int/int_config.h"

#include "lib/config/config_section.h"
#include "lib/config/yaml_reader.h"

namespace sluice {
namespace {

// HPCC's INT: the section's presence turns it on unless it says
// enabled: false.
void parse_int(YamlReader& r, const Field& e, SwitchConfig* sw) {
  bool* out = &sw->int_telemetry;
  if (!r.expect_map(e, {"enabled"})) return;
  *out = true;
  if (auto f = r.field(e, "enabled", Need::kOptional)) set(r.boolean(*f), out);
}

}  // namespace

const ConfigSections kIntSections{
    .in_switch = {.key = "int", .parse = parse_int},
};

}  // namespace sluice
