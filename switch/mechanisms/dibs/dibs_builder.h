#pragma once
// DIBS state of a built Runtime (docs/mechanisms/dibs.md, "In the data
// path"): per switch with dibs on, its candidate ports and snapshots, one
// DibsRules per worker lcore that owns some of its ports, and which ports
// carry the detour count in the shim or the mbuf.

#include <string>

#include "switch/runtime/runtime.h"

namespace sluice {

// Call after the traffic managers and BFC exist. Returns an empty string on
// success.
std::string create_dibs(Runtime& rt);

// A DIBS switch's counters summed over its lcores (report, scraper).
struct DibsSwitchTotals {
  uint64_t detours = 0;
  uint64_t drops[kDetourDropCount] = {};
  uint64_t buckets[kDetourBuckets] = {};
  uint64_t exit_detours = 0;  // summed over the packets in buckets
};
DibsSwitchTotals dibs_switch_totals(const Runtime& rt, const SwitchRuntime& sw);
// Detours into global port p (0 where DIBS is off).
uint64_t dibs_port_detours(const Runtime& rt, uint16_t p);

}  // namespace sluice
