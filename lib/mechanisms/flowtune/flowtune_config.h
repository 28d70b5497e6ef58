#pragma once
// Flowtune's configuration: a switch's flowtune: section and the top-level
// flowtune_allocator: section (docs/configuration.md, "switches[].flowtune"
// and "flowtune_allocator"). flowtune_config.cc parses and validates them;
// SwitchConfig::flowtune and Config::flowtune_allocator hold them.

#include <cstdint>

namespace sluice {

// Flowtune at an edge switch (SPEC 4.5; docs/mechanisms/flowtune.md, "Edge
// switches"): packets that hosts send into this switch are tracked per
// flowlet, reported to the allocator, and paced per flow at the rate it
// returns.
struct FlowtuneConfig {
  bool enabled = false;
  // sluice-allocator's UDP address (real time; exact time has the
  // allocator in the fabric, FlowtuneAllocatorConfig).
  uint32_t allocator_ip = 0x7F000001;  // host order; 127.0.0.1
  uint16_t allocator_port = 9750;
  bool allocator_given = false;           // the key was in the file
  uint64_t idle_gap_ns = 100'000;         // a flowlet ends after this long idle
  uint64_t lease_ns = 10'000'000;         // a rate holds this long (sluice-allocator --lease)
  uint32_t flows = 4096;                  // flowlet table and pacer slots, a power of two
  uint32_t max_held_packets = 64;         // per flow, in the pacer queue
  uint64_t ecn_threshold_bytes = 30'000;  // held bytes of a flow above which CE is marked
  uint32_t weight = 1;                    // every flowlet's weight in FLOWLET_START
  // Where flows are paced at their allocated rate: the edge switch's pacer
  // (false), or the flow's own endpoint, a transport host that paces itself
  // as the paper's servers do (true; pace_at: host).
  bool pace_at_host = false;
};

// Flowtune's allocator inside the fabric, on exact fabric time (SPEC 4.5,
// 4.9; docs/mechanisms/flowtune.md, "The allocator in the fabric"): one
// allocator for every edge switch with flowtune on, reached over a control
// path with a fixed one-way delay. The top-level section's presence turns it
// on. Its lease is the edges' (the smallest, if they differ).
struct FlowtuneAllocatorConfig {
  bool enabled = false;
  uint64_t control_delay_ns = 8'500;  // one way, edge to allocator and back
  uint64_t iteration_ns = 10'000;     // the paper's period (§5.3)
  double threshold = 0.01;            // headroom and notification threshold
  uint64_t host_rate_bps = 0;         // 0: the edges' host ports' rate, if they share one
  uint32_t hosts = 1024;              // distinct host addresses
  uint32_t flows = 0;                 // live flows; 0: twice the edges' flowlet slots
  // Paths: false, one big switch (each flow's host links only); true, the
  // links between switches it crosses too (the paper's full paths).
  bool full_paths = false;
  int line = 0;
};

struct ConfigSections;
// The flowtune: section of a switch and the top-level flowtune_allocator:.
extern const ConfigSections kFlowtuneSections;

}  // namespace sluice
