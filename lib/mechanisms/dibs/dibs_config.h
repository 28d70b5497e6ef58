#pragma once
// DIBS's configuration: a switch's dibs: section (docs/configuration.md,
// "switches[].dibs"). dibs_config.cc parses and validates it;
// SwitchConfig::dibs holds it.

#include <cstdint>

namespace sluice {

enum class DibsPolicy { kRandom, kLoadAware };

// DIBS, detour instead of drop (SPEC 4.3; docs/mechanisms/dibs.md): a data
// packet that buffer admission refuses leaves by another switch-facing port
// whose queue admits it. For lossy fabrics only (refused with PFC, BFC and
// Floodgate).
struct DibsConfig {
  bool enabled = false;
  DibsPolicy policy = DibsPolicy::kRandom;
  uint32_t max_detours = 0;  // detours a packet may take (its shim count); 0: no cap, TTL only
};

struct ConfigSections;
// The dibs: section of a switch.
extern const ConfigSections kDibsSections;

}  // namespace sluice
