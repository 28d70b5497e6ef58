#pragma once
// BFC state of a built Runtime: per switch with bfc on, one shard per worker
// lcore that owns some of its ports, the bitmap schedule of each shard, the
// upstream pause state of every switch-facing port, and each lcore's control
// ring. docs/mechanisms/bfc.md ("In the data path").

#include <string>

#include "switch/runtime/runtime.h"

namespace sluice {

// Call after the traffic managers exist. Returns an empty string on success.
std::string create_bfc(Runtime& rt);

// BFC's HRTT: the largest hop_rtt of the switch's switch-facing ports (all
// ports when it has none). lib/mechanisms/bfc/hop_rtt.h.
uint64_t bfc_hop_rtt_ns(const Runtime& rt, const SwitchRuntime& sw);

// A BFC switch's flow-table and assignment figures, summed over its shards
// (for the scraper and the summary).
struct BfcSwitchTotals {
  uint64_t flow_table_entries = 0;
  uint64_t flow_table_occupied = 0;
  uint64_t index_collisions = 0;
  uint64_t queue_collisions = 0;
};
BfcSwitchTotals bfc_switch_totals(const Runtime& rt, const SwitchRuntime& sw);

}  // namespace sluice
