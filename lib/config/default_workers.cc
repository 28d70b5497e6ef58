#include "lib/config/default_workers.h"

#include <optional>

namespace sluice {

std::vector<unsigned> default_port_workers(const Config& config, unsigned worker_count) {
  std::vector<unsigned> out;
  if (worker_count == 0) return out;
  for (const SwitchConfig& sw : config.switches) {
    std::optional<unsigned> window_owner;  // of a Floodgate switch's switch-facing ports
    for (const PortConfig& port : sw.ports) {
      unsigned slot = static_cast<unsigned>(out.size()) % worker_count;
      if (sw.floodgate.enabled && port.role == PortRole::kSwitch) {
        if (!window_owner) window_owner = slot;
        slot = *window_owner;
      }
      out.push_back(slot);
    }
  }
  return out;
}

}  // namespace sluice
