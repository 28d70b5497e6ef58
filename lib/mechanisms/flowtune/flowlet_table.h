#pragma once
// Flowtune's flowlet detection at an edge switch (SPEC §4.5; "Flowtune:
// Flowlet Control for Datacenter Networks", Perry et al., NSDI 2017, §2 and
// §6): a flowlet is a burst of one flow's packets; it ends once the flow has
// been idle for more than `idle_gap_ns`. The edge reports FLOWLET_START when
// one begins and FLOWLET_END when it ends, and the allocator keeps a rate for
// the flowlets it knows.
//
// Idle gap: default 100 µs (the configuration key's default). It must exceed
// the hosts' RTT: a TCP sender that waits one RTT for ACKs is idle that long
// in the middle of a transfer, so a gap shorter than the RTT splits one TCP
// flow into many flowlets (and many START/END pairs to the allocator).
//
// Identity: flows are keyed by a 64-bit key the caller derives from the
// 5-tuple (a 64-bit hash of it; two distinct flows with the same key, odds
// about n²/2^65, are taken as one). The table is set-associative: the key's
// mixed bits pick a bucket of kWays slots, the key is compared in each.
// A new flow whose bucket already holds other flows is a collision (counted,
// handled by taking another way). A bucket with every way held by a live
// flowlet is "table full": counted, and the packet is forwarded unpaced and
// not reported.
//
// Flow ids: every flowlet gets a NEW id, also when the same flow starts again
// after an idle gap. The allocator removes a flow at FLOWLET_END (paper §2:
// it allocates among the flowlets that are active), so the next flowlet is a
// new flow to it; a fresh id means a late RATE_UPDATE for the old flowlet, or
// an END and a START reordered on the way, can never touch the new one.
// id = (counter << slot_bits) | slot: the low bits name the slot (FlowPacer
// uses them to find its per-flow state in O(1)), the counter tells successive
// flowlets of the slot apart. It wraps after 2^(32 - slot_bits) flowlets;
// id 0 is never used (the counter skips 0), so 0 means "none".
//
// Time is an argument (ns). Single writer; no allocation after construction.
// docs/mechanisms/flowtune.md ("Edge rules (library)").

#include <cstdint>
#include <vector>

#include "lib/common/relaxed_counter.h"

namespace sluice {

class FlowletTable {
 public:
  static constexpr uint64_t kDefaultIdleGapNs = 100'000;  // 100 µs
  static constexpr uint32_t kWays = 4;

  enum class Kind : uint8_t {
    kStart,      // this packet starts a flowlet: send FLOWLET_START(flow_id)
    kContinue,   // within the current flowlet of flow_id
    kUntracked,  // table full: forward unpaced, report nothing (flow_id 0)
  };
  struct Result {
    Kind kind;
    uint32_t flow_id;        // 0 for kUntracked
    uint32_t ended_flow_id;  // != 0: a flowlet that ended here before expire()
                             // saw it; send FLOWLET_END for it first
  };

  // capacity: slots, a power of two, >= kWays and <= 2^24 (else
  // std::invalid_argument). idle_gap_ns must be > 0.
  explicit FlowletTable(uint32_t capacity, uint64_t idle_gap_ns = kDefaultIdleGapNs);

  // One packet of flow `key` (src/dst IPv4, host order, for FLOWLET_START).
  Result on_packet(uint64_t key, uint32_t src_ip, uint32_t dst_ip, uint64_t now_ns);

  // The flowlet `flow_id` is active until until_ns, which may lie ahead
  // (the pacer holds one of its packets until then): its idle gap counts
  // from there, so a flowlet never ends while its queue drains. Ignored when
  // the id no longer holds its slot.
  void touch(uint32_t flow_id, uint64_t until_ns) {
    Slot& s = slots_[slot_of(flow_id)];
    if (flow_id != 0 && s.id == flow_id && until_ns > s.last_ns) s.last_ns = until_ns;
  }

  // Looks at up to `max_slots` slots (round robin from where the last call
  // stopped) and ends every flowlet idle for more than the gap:
  // on_end(flow_id) once per flowlet, then the slot is free. Run from a
  // timer; a whole sweep takes capacity / max_slots calls, so a flowlet's
  // END is late by at most that many timer periods. Returns how many ended.
  template <class OnEnd>
  uint32_t expire(uint64_t now_ns, uint32_t max_slots, OnEnd&& on_end);

  // No flowlet can end before this instant (kNever: none is live). A lower
  // bound: a packet since may have moved the flowlet's end later. It is
  // exact after a whole sweep (expire with max_slots >= capacity), so that
  // exact fabric time can run that sweep when the first flowlet ends, and
  // the END leaves at the instant the gap runs out.
  static constexpr uint64_t kNever = UINT64_MAX;
  uint64_t next_end_ns() const { return active_ == 0 ? kNever : next_end_ns_; }

  uint32_t capacity() const { return static_cast<uint32_t>(slots_.size()); }
  uint32_t slot_bits() const { return slot_bits_; }
  uint64_t idle_gap_ns() const { return gap_; }
  uint32_t active() const { return active_; }
  // Slot of a flow id (also FlowPacer's index).
  uint32_t slot_of(uint32_t flow_id) const { return flow_id & (capacity() - 1); }

  RelaxedCounter flowlets_started;
  RelaxedCounter flowlets_ended;  // by expire() and by on_packet's ended_flow_id
  RelaxedCounter collisions;      // new flow into a bucket already holding others
  RelaxedCounter table_full;      // packets forwarded unpaced, not reported

 private:
  struct Slot {
    uint64_t key = 0;
    uint64_t last_ns = 0;
    uint32_t id = 0;  // 0: free
    uint32_t src_ip = 0;
    uint32_t dst_ip = 0;
  };
  bool idle(const Slot& s, uint64_t now_ns) const {
    return now_ns > s.last_ns && now_ns - s.last_ns > gap_;
  }
  uint32_t next_id(uint32_t slot);
  // The first instant the flowlet is idle past the gap.
  uint64_t end_of(const Slot& s) const { return s.last_ns + gap_ + 1; }
  void started(uint64_t now_ns) {
    if (now_ns + gap_ + 1 < next_end_ns_) next_end_ns_ = now_ns + gap_ + 1;
  }

  std::vector<Slot> slots_;
  uint64_t gap_;
  uint32_t slot_bits_ = 0;
  uint32_t bucket_mask_ = 0;
  uint32_t counter_ = 0;  // high part of the next id
  uint32_t cursor_ = 0;   // expire()'s position
  uint32_t active_ = 0;
  uint64_t next_end_ns_ = kNever;  // see next_end_ns()
};

template <class OnEnd>
uint32_t FlowletTable::expire(uint64_t now_ns, uint32_t max_slots, OnEnd&& on_end) {
  const bool whole = max_slots >= capacity();
  const uint32_t n = whole ? capacity() : max_slots;
  const uint32_t mask = capacity() - 1;
  uint32_t ended = 0;
  uint64_t next_end = kNever;
  for (uint32_t i = 0; i < n; ++i) {
    Slot& s = slots_[cursor_];
    cursor_ = (cursor_ + 1) & mask;
    if (s.id == 0) continue;
    if (!idle(s, now_ns)) {
      if (end_of(s) < next_end) next_end = end_of(s);
      continue;
    }
    const uint32_t id = s.id;
    s.id = 0;
    --active_;
    ++ended;
    flowlets_ended.add();
    on_end(id);
  }
  // on_end may not start flowlets (it reports, it does not forward), so
  // what the sweep saw is every live flowlet.
  if (whole) next_end_ns_ = next_end;
  return ended;
}

}  // namespace sluice
