#pragma once
// PFC's configuration: a switch's pfc: section and a port's pfc: key
// (docs/configuration.md, "switches[].pfc"). pfc_config.cc parses and
// validates them; SwitchConfig::pfc and PortConfig::pfc hold them.

#include <cstdint>

namespace sluice {

enum class PfcGenerationMode { kOff, kPfc, kPause };

// Hop-by-hop lossless baseline (IEEE 802.1Qbb PFC, or 802.3x PAUSE for the
// whole port); docs/mechanisms/pfc.md.
struct PfcConfig {
  PfcGenerationMode mode = PfcGenerationMode::kOff;
  uint64_t xoff_bytes = 200'000;  // static XOFF threshold per (ingress, priority)
  bool dynamic = false;           // XOFF at alpha x free buffer instead
  double alpha = 0.125;
  uint64_t hysteresis_bytes = 0;  // 0: 2 x (MTU + 14)
  uint16_t quanta = 0xFFFF;       // pause time asked for on XOFF
  uint8_t priorities = 0xFF;      // bit p: priority p is lossless
};

struct ConfigSections;
// The pfc: section of a switch and the pfc: opt-out of a port.
extern const ConfigSections kPfcSections;

}  // namespace sluice
