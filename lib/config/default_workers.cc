#include "lib/config/default_workers.h"

#include <optional>

#include "lib/config/config_section.h"

namespace sluice {

std::vector<unsigned> default_port_workers(const Config& config, unsigned worker_count) {
  std::vector<unsigned> out;
  if (worker_count == 0) return out;
  const auto sections = all_config_sections();
  for (const SwitchConfig& sw : config.switches) {
    // Per section, the worker of the switch's ports it keeps on one lcore.
    std::vector<std::optional<unsigned>> group_owner(sections.size());
    for (const PortConfig& port : sw.ports) {
      unsigned slot = static_cast<unsigned>(out.size()) % worker_count;
      for (size_t i = 0; i < sections.size(); ++i) {
        const auto one_lcore = sections[i]->in_switch.one_lcore;
        if (one_lcore == nullptr || !one_lcore(sw, port)) continue;
        if (!group_owner[i]) group_owner[i] = slot;
        slot = *group_owner[i];
        break;  // a port that several sections group goes with the first
      }
      out.push_back(slot);
    }
  }
  return out;
}

}  // namespace sluice
