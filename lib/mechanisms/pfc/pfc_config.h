#pragma once
// PFC's configuration: a switch's pfc: section and a port's pfc: key
// (docs/configuration.md, "switches[].pfc"). pfc_config.cc parses and
// validates them; SwitchConfig::pfc and PortConfig::pfc hold them.

#include <cstdint>
#include <optional>

namespace sluice {

enum class PfcGenerationMode { kOff, kPfc, kPause };

// Hop-by-hop lossless baseline (IEEE 802.1Qbb PFC, or 802.3x PAUSE for the
// whole port); docs/mechanisms/pfc.md.
struct PfcConfig {
  PfcGenerationMode mode = PfcGenerationMode::kOff;
  uint64_t xoff_bytes = 200'000;  // static XOFF threshold per (ingress, priority)
  bool dynamic = false;           // XOFF at alpha x free pool instead
  double alpha = 0.125;
  uint64_t hysteresis_bytes = 0;  // 0: 2 x (MTU + 14); the resume offset
  // Per (ingress, priority), bytes that count neither against the threshold
  // nor the shared pool; and per ingress, bytes set aside from the pool for
  // what still arrives after an XOFF (0: no headroom accounting).
  uint64_t reserve_bytes = 0;
  uint64_t headroom_bytes = 0;
  uint16_t quanta = 0xFFFF;   // pause time asked for on XOFF
  uint8_t priorities = 0xFF;  // bit p: priority p is lossless
};

// A port's pfc: key. `false` keeps the port out of its switch's PFC; a map
// gives the port its own thresholds, each replacing the switch's (the public
// simulators set alpha and headroom per port, by link rate).
struct PortPfcConfig {
  bool enabled = true;
  std::optional<bool> dynamic;
  std::optional<uint64_t> xoff_bytes;
  std::optional<double> alpha;
  std::optional<uint64_t> hysteresis_bytes;
  std::optional<uint64_t> reserve_bytes;
  std::optional<uint64_t> headroom_bytes;
};

// The switch's settings with the port's own in their place.
inline PfcConfig port_pfc(const PfcConfig& sw, const PortPfcConfig& port) {
  PfcConfig c = sw;
  if (port.dynamic) c.dynamic = *port.dynamic;
  if (port.xoff_bytes) c.xoff_bytes = *port.xoff_bytes;
  if (port.alpha) c.alpha = *port.alpha;
  if (port.hysteresis_bytes) c.hysteresis_bytes = *port.hysteresis_bytes;
  if (port.reserve_bytes) c.reserve_bytes = *port.reserve_bytes;
  if (port.headroom_bytes) c.headroom_bytes = *port.headroom_bytes;
  return c;
}

struct ConfigSections;
// The pfc: section of a switch and the pfc: key of a port.
extern const ConfigSections kPfcSections;

}  // namespace sluice
