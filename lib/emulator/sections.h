#pragma once
// The emulator's configuration sections (lib/config/config_section.h), one
// line per folder in sections.cc.

#include <span>

#include "lib/config/config_section.h"

namespace sluice {

// In the order the loader reads them, after the mechanisms'.
std::span<const ConfigSections* const> emulator_sections();

}  // namespace sluice
