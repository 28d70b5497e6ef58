#pragma once
// Floodgate's configuration: a switch's floodgate: section
// (docs/configuration.md, "switches[].floodgate"). floodgate_config.cc
// parses and validates it; SwitchConfig::floodgate holds it.

#include <cstdint>

namespace sluice {

// Floodgate (SPEC 4.1; docs/mechanisms/floodgate.md). Windows and credits act
// on switch-facing ports; dstPause toward host-facing ones.
struct FloodgateConfig {
  bool enabled = false;
  double alpha = 1.5;                    // initial window = alpha x BDP + C_out x T
  uint64_t credit_interval_ns = 10'000;  // T
  uint64_t credit_threshold_bytes = 10'240;
  uint32_t voqs = 100;
  uint32_t voq_packets = 65'536;      // packets held in all VOQs together
  uint32_t max_destinations = 4'096;  // windows (and dstPause pairs) per switch
  bool delay_credit = true;
  double delay_credit_factor = 1.5;  // x max port rate x max hop_rtt
  bool dst_pause = false;
  double dst_pause_factor = 1.5;  // x the host link's BDP
  uint64_t dst_pause_hysteresis_bytes = 3'072;
  uint64_t voq_ecn_bytes = 0;  // mark CE entering a VOQ above this; 0: off
  bool sync = false;           // loss recovery with FG_SYNC
  uint64_t sync_interval_ns = 1'000'000;
};

struct ConfigSections;
// The floodgate: section of a switch.
extern const ConfigSections kFloodgateSections;

}  // namespace sluice
