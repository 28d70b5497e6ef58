#pragma once
// Flowtune's per-flow pacing at an edge switch (SPEC §4.5): each flowlet is
// sent at the rate the allocator last gave it (RATE_UPDATE, kbit/s as the
// wire carries it). A rate holds for a lease; a flow with no rate, or whose
// lease ran out, is forwarded unpaced (SPEC: "an edge with no fresh rate
// forwards the flow unpaced").
//
// Pacing is a virtual finish time per flow: a packet of b bytes leaves at
// t = max(now, next_send), and next_send = t + b·8 / rate. So a flow that was
// quiet sends its first packet at once and a burst is spread at the rate.
// next_send is kept in picoseconds: each packet's cost is rounded down by
// < 1 ps, i.e. under 1e-5 relative for 1500-byte packets at <= 100 Gb/s
// (2e-4 for 64-byte ones).
//
// The pacer decides times and counts; the data path owns the packet queues.
// A held packet (kHold) stays in the flow's queue until send_at_ns and the
// caller calls sent() when it leaves. The queue is bounded: a flow holding
// max_held_packets already drops the packet (counted). A held packet is
// ECN-marked (CE, when ECN-capable) when the flow's held bytes including it
// exceed ecn_threshold_bytes.
//
// Per-flow state lives in `capacity` slots indexed by the low bits of the
// flow id (FlowletTable's ids: slot in the low bits), so capacity is the
// FlowletTable's. start(id) claims the slot for a new flowlet; messages for an
// id that no longer holds its slot are ignored (counted stale).
// Time is an argument (ns). Single writer; no allocation after construction.
// docs/mechanisms/flowtune.md ("Edge rules (library)").

#include <cstdint>
#include <vector>

#include "lib/common/relaxed_counter.h"

namespace sluice {

class FlowPacer {
 public:
  static constexpr uint32_t kMaxPacketBytes = 1u << 20;  // larger packets cost as this

  struct Config {
    uint32_t max_held_packets = 64;
    uint64_t ecn_threshold_bytes = 30'000;
  };
  enum class Action : uint8_t {
    kSend,     // now
    kHold,     // queue it until send_at_ns
    kDrop,     // the flow's queue is full
    kUnpaced,  // no fresh rate (or unknown flow): forward now, unpaced
  };
  struct Verdict {
    Action action;
    uint64_t send_at_ns;  // kSend/kUnpaced: now; kHold: when to send; kDrop: 0
    bool ecn_mark;        // kHold only
  };

  // capacity: a power of two (std::invalid_argument otherwise).
  FlowPacer(uint32_t capacity, Config config);

  // A new flowlet (FlowletTable said kStart): the slot is its, with no rate
  // and an empty queue, until the next start() on the same slot.
  void start(uint32_t flow_id);
  // RATE_UPDATE: the flow's rate, fresh until now + lease_ns. kbps == 0 is no
  // rate (unpaced). False (ignored, counted stale) when id does not hold its
  // slot.
  bool set_rate(uint32_t flow_id, uint32_t kbps, uint64_t now_ns, uint64_t lease_ns);
  // One packet of `bytes` of the flow, arriving at now_ns.
  Verdict admit(uint32_t flow_id, uint32_t bytes, uint64_t now_ns);
  // A held packet of `bytes` left the flow's queue (or was flushed).
  void sent(uint32_t flow_id, uint32_t bytes);

  // Whether the flow has a rate whose lease has not expired at now_ns.
  bool fresh(uint32_t flow_id, uint64_t now_ns) const;
  uint32_t rate_kbps(uint32_t flow_id) const;
  uint32_t held_packets(uint32_t flow_id) const;
  uint64_t held_bytes(uint32_t flow_id) const;
  uint32_t capacity() const { return static_cast<uint32_t>(flows_.size()); }
  const Config& config() const { return config_; }

  RelaxedCounter paced;    // packets sent at once, within their rate
  RelaxedCounter unpaced;  // packets forwarded unpaced (no fresh rate)
  RelaxedCounter held;     // packets held for later
  RelaxedCounter dropped;  // queue full
  RelaxedCounter marked;   // held packets ECN-marked
  RelaxedCounter stale;    // set_rate for an id that no longer holds its slot

 private:
  struct Flow {
    uint32_t id = 0;  // 0: none
    uint32_t kbps = 0;
    uint64_t lease_end_ns = 0;
    uint64_t next_send_ps = 0;
    uint64_t held_bytes = 0;
    uint32_t held_packets = 0;
  };
  Flow* find(uint32_t flow_id) {
    Flow& f = flows_[flow_id & mask_];
    return flow_id != 0 && f.id == flow_id ? &f : nullptr;
  }
  const Flow* find(uint32_t flow_id) const {
    const Flow& f = flows_[flow_id & mask_];
    return flow_id != 0 && f.id == flow_id ? &f : nullptr;
  }

  std::vector<Flow> flows_;
  Config config_;
  uint32_t mask_;
};

}  // namespace sluice
