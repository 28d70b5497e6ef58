#pragma once
// BFC's configuration: a switch's bfc: section (docs/configuration.md,
// "switches[].bfc"). bfc_config.cc parses and validates it;
// SwitchConfig::bfc holds it.

#include <cstdint>
#include <string>
#include <vector>

namespace sluice {

enum class BfcAssignmentKind { kDynamic, kStochastic, kSingle };

// Ports of one switch between which BFC never generates backpressure: every
// (ingress in `from`, egress in `to`) pair (deadlock avoidance).
struct BfcElidedPairs {
  std::vector<std::string> from;
  std::vector<std::string> to;
  int line = 0;
};

// Backpressure Flow Control; docs/mechanisms/bfc.md.
struct BfcConfig {
  bool enabled = false;
  BfcAssignmentKind assignment = BfcAssignmentKind::kDynamic;
  uint32_t flow_table_factor = 100;  // flow-table entries per data queue of the switch
  uint64_t sticky_ns = 0;            // 0: 2 x hop RTT
  uint64_t bitmap_interval_ns = 0;   // 0: 10 x hop RTT
  uint64_t th_ns = 0;  // Th as time at line rate (Th = th x rate / N_active); 0: hop RTT
  std::vector<BfcElidedPairs> no_backpressure;
};

struct ConfigSections;
// The bfc: section of a switch.
extern const ConfigSections kBfcSections;

}  // namespace sluice
