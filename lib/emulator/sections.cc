#include "lib/emulator/sections.h"

namespace sluice {

std::span<const ConfigSections* const> emulator_sections() { return {}; }

}  // namespace sluice
