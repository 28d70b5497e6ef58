#pragma once
// Flowtune state of a built Runtime (docs/mechanisms/flowtune.md, "Edge
// switches"): per switch with flowtune on, one FlowtuneEdge (and allocator
// socket) per worker lcore that owns some of its host ports, and those
// ports pointed at it.

#include <string>

#include "switch/runtime.h"

namespace sluice {

// Returns an empty string on success.
std::string create_flowtune(Runtime& rt);

// An edge switch's counters summed over its lcores (report, scraper).
struct FlowtuneTotals {
  uint64_t flowlets_started = 0, flowlets_ended = 0, active_flowlets = 0;
  uint64_t table_full = 0, collisions = 0;
  uint64_t paced = 0, unpaced = 0, held = 0, marked = 0, dropped = 0, flushed = 0;
  uint64_t held_now = 0;
  uint64_t starts_sent = 0, ends_sent = 0, datagrams_sent = 0, send_errors = 0;
  uint64_t events_lost = 0;  // rings between the worker and the control thread full
  uint64_t datagrams_received = 0, rate_updates = 0, stale_updates = 0, unexpected = 0;
  uint64_t malformed = 0;  // all reasons
};
FlowtuneTotals flowtune_totals(const Runtime& rt, const SwitchRuntime& sw);

}  // namespace sluice
