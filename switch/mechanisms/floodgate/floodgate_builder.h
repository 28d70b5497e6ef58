#pragma once
// Floodgate state of a built Runtime (docs/mechanisms/floodgate.md, "In the
// data path"): per switch with a floodgate section, the window / VOQ state on
// the lcore that owns its switch-facing ports, the dense port numbering the
// rules use, each port's initial window, and a credit aggregator on every
// lcore that owns one of the switch's ports.

#include <string>

#include "switch/runtime/runtime.h"

namespace sluice {

// Call after the traffic managers and shared buffers exist. Returns an empty
// string on success.
std::string create_floodgate(Runtime& rt);

// A Floodgate switch's figures for the scraper and the summary: gauges of
// its windows and VOQs, and counters summed over the lcores' aggregators.
// Every field is a relaxed read; any thread may call it.
struct FloodgateSwitchTotals {
  uint64_t windows_in_use = 0;  // below their initial value
  uint64_t window_outstanding_bytes = 0;
  uint64_t voqs_in_use = 0, voq_packets = 0, voq_bytes = 0, peak_voq_bytes = 0;
  uint64_t held_packets = 0, uncontrolled_packets = 0, voq_shared = 0, voq_marks = 0;
  uint64_t invalid_credit_bytes = 0, table_full = 0;
  uint64_t credit_withheld_bytes = 0;
  uint64_t dst_paused = 0, dst_pause_untracked = 0;
  uint64_t sync_healed_data_bytes = 0, sync_healed_credit_bytes = 0, sync_behind = 0;
  uint64_t sync_untracked = 0;
};
FloodgateSwitchTotals floodgate_switch_totals(const Runtime& rt, const SwitchRuntime& sw);

}  // namespace sluice
