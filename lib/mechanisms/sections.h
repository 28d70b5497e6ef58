#pragma once
// The mechanisms' configuration sections (lib/config/config_section.h), one
// line per mechanism in sections.cc.

#include <span>

#include "lib/config/config_section.h"

namespace sluice {

// In the order the loader reads a switch's sections (and so reports their
// errors): pfc, bfc, floodgate, tcd, dibs, flowtune, int.
std::span<const ConfigSections* const> mechanism_sections();

}  // namespace sluice
