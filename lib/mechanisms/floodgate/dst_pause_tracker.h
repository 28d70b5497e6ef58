#pragma once
// Floodgate's dstPause (SPEC 4.1 "dstPause"; "Floodgate: Taming Incast in
// Datacenter Networks", section 5.4, the paper's ideal per-destination
// PAUSE): per (host-facing ingress port, destination), the bytes that came
// in from that host for that destination and are still in this switch.
// Above `pause_bytes` the host is told to pause that destination; at or
// below `pause_bytes - hysteresis_bytes` (or at zero) to resume it.
// Ingress ports are numbered densely by the caller. The table has a fixed
// capacity; a pair that finds no room is not tracked (counted).
// Single writer; no allocation after construction.
// docs/mechanisms/floodgate.md ("dstPause").

#include <cstdint>

#include "lib/common/relaxed_counter.h"
#include "lib/mechanisms/floodgate/port_dst_table.h"

namespace sluice {

enum class DstPauseSignal : uint8_t { kNone, kPause, kResume };

class DstPauseTracker {
 public:
  DstPauseTracker(uint32_t max_pairs, uint64_t pause_bytes, uint64_t hysteresis_bytes);

  // A packet of `bytes` from host port i toward dst entered the switch.
  DstPauseSignal on_enter(uint32_t i, uint32_t dst, uint32_t bytes);
  // It left (sent or dropped).
  DstPauseSignal on_leave(uint32_t i, uint32_t dst, uint32_t bytes);

  uint64_t bytes(uint32_t i, uint32_t dst) const;
  uint64_t paused() const { return paused_.get(); }  // pairs paused now
  RelaxedCounter untracked;                          // packets of pairs that found no room

 private:
  struct Pair {
    uint64_t bytes = 0;
    bool paused = false;
  };

  uint64_t pause_;
  uint64_t resume_;
  PortDstTable<Pair> pairs_;
  RelaxedCounter paused_;
};

}  // namespace sluice
