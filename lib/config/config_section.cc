#include "lib/config/config_section.h"

#include <vector>

#include "lib/emulator/sections.h"
#include "lib/mechanisms/sections.h"

namespace sluice {

std::span<const ConfigSections* const> all_config_sections() {
  static const std::vector<const ConfigSections*> all = [] {
    const auto mechanisms = mechanism_sections();
    const auto emulator = emulator_sections();
    std::vector<const ConfigSections*> out(mechanisms.begin(), mechanisms.end());
    out.insert(out.end(), emulator.begin(), emulator.end());
    return out;
  }();
  return all;
}

}  // namespace sluice
