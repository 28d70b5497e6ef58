#pragma once
// TCD's configuration: a switch's tcd: section (docs/configuration.md,
// "switches[].tcd"). tcd_config.cc parses and validates it;
// SwitchConfig::tcd holds it.

#include <cstdint>

namespace sluice {

// TCD, ternary congestion detection (SPEC 4.4; docs/mechanisms/tcd.md).
// Replaces the traffic manager's ECN marking at enqueue on its switch.
struct TcdConfig {
  bool enabled = false;
  uint64_t q_th_bytes = 0;   // 0: the switch's ECN step threshold k
  uint64_t max_t_on_ns = 0;  // 0: per port, from the PFC or BFC settings
  uint8_t ce_codepoint = 0b11;
  uint8_t ue_codepoint = 0b01;       // ECT(1)
  bool queue_falling = false;        // sluice's addition: leave undetermined when the queue falls
  uint64_t falling_interval_ns = 0;  // 0: the port's hop_rtt
};

struct ConfigSections;
// The tcd: section of a switch.
extern const ConfigSections kTcdSections;

}  // namespace sluice
