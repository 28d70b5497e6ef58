#pragma once
// Flowtune state of a built Runtime (docs/mechanisms/flowtune.md, "Edge
// switches"): per switch with flowtune on, one FlowtuneEdge per worker lcore
// that owns some of its host ports, and those ports pointed at it; each
// edge with its UDP path to sluice-allocator (real time) or attached to
// the allocator in the fabric, made here (exact time, flowtune_allocator).

#include <string>

#include "switch/runtime/runtime.h"

namespace sluice {

// Returns an empty string on success.
std::string create_flowtune(Runtime& rt);

// An edge switch's counters summed over its lcores (report, scraper).
struct FlowtuneTotals {
  uint64_t flowlets_started = 0, flowlets_ended = 0, active_flowlets = 0;
  uint64_t table_full = 0, collisions = 0;
  uint64_t paced = 0, unpaced = 0, held = 0, marked = 0, dropped = 0, flushed = 0;
  uint64_t held_now = 0;
  // datagrams_sent: in exact time, the datagrams the news would fill.
  uint64_t starts_sent = 0, ends_sent = 0, datagrams_sent = 0, send_errors = 0;
  uint64_t events_lost = 0;  // the way to the allocator (or, UDP, back) full
  uint64_t datagrams_received = 0, rate_updates = 0, stale_updates = 0, unexpected = 0;
  uint64_t malformed = 0;  // all reasons
};
FlowtuneTotals flowtune_totals(const Runtime& rt, const SwitchRuntime& sw);

}  // namespace sluice
