#pragma once
// BFC queue assignment: which data queue of the egress port a flow-table
// entry uses. docs/mechanisms/bfc.md ("Queue assignment").
//
//   dynamic    keep the entry's queue while it has packets in the switch or
//              was active less than sticky_ns ago; otherwise the first empty
//              queue at or after a rotating start; if none is empty, a random
//              queue (counted as a queue collision).
//   stochastic hash mod queues, fixed for ever.
//   single     queue 0 (every flow shares one queue: PFC-like HoL blocking).
//
// The caller reports queue emptiness (on_queue_nonempty / on_queue_empty);
// every queue starts empty. Single writer; no allocation after construction.

#include <bit>
#include <cstdint>
#include <memory>

#include "lib/bfc/flow_table.h"
#include "lib/common/saturating.h"
#include "lib/common/relaxed_counter.h"
#include "lib/common/xorshift.h"

namespace sluice {

enum class BfcAssignment : uint8_t { kDynamic, kStochastic, kSingle };

struct QueueAssignerConfig {
  BfcAssignment mode = BfcAssignment::kDynamic;
  uint32_t num_ports = 1;
  uint32_t queues_per_port = 32;  // 1..64, as EgressPort
  uint64_t sticky_ns = 0;         // 2 x one-hop RTT
  uint64_t rng_seed = 1;
};

class QueueAssigner {
 public:
  // Throws std::invalid_argument for 0 ports or queues outside 1..64.
  explicit QueueAssigner(const QueueAssignerConfig& cfg);

  // The queue for a packet of `hash` to `egress` whose flow-table entry is
  // `e`; records it in the entry (and marks the entry used). Per packet, so
  // defined inline below, as are the helpers it calls.
  uint16_t assign(uint16_t egress, uint32_t hash, FlowEntry& e, uint64_t now_ns) {
    uint16_t q = 0;
    switch (mode_) {
      case BfcAssignment::kSingle:
        q = 0;
        break;
      case BfcAssignment::kStochastic:
        q = static_cast<uint16_t>(hash % queues_);
        break;
      case BfcAssignment::kDynamic:
        q = keeps_queue(e, now_ns) ? e.queue : pick_dynamic(egress);
        break;
    }
    e.queue = q;
    e.used = true;
    return q;
  }

  void on_queue_nonempty(uint16_t egress, uint16_t q) { empty_[egress] &= ~(uint64_t{1} << q); }
  void on_queue_empty(uint16_t egress, uint16_t q) { empty_[egress] |= uint64_t{1} << q; }
  uint64_t empty_mask(uint16_t egress) const { return empty_[egress]; }

  uint64_t queue_collisions() const { return queue_collisions_.get(); }
  uint32_t queues_per_port() const { return queues_; }

 private:
  // Sticky: packets still here (moving would reorder them), or active within
  // sticky_ns (upstream may still hold packets sent under the old assignment).
  // Saturating: a configured sticky near 2^64 must not wrap to "expired".
  bool keeps_queue(const FlowEntry& e, uint64_t now_ns) const {
    if (!e.used || e.queue >= queues_) return false;
    return e.packets > 0 || now_ns < sat_add(e.last_active_ns, sticky_ns_);
  }

  uint16_t pick_dynamic(uint16_t egress) {
    const uint64_t empty = empty_[egress] & all_mask_;
    if (empty == 0) {
      queue_collisions_.add(1);
      return static_cast<uint16_t>((static_cast<uint64_t>(rng_.next32()) * queues_) >> 32);
    }
    // First empty queue at or after the start, wrapping around.
    const unsigned start = next_start_[egress];
    const uint64_t at_or_after = empty & (~uint64_t{0} << start);
    const unsigned q = static_cast<unsigned>(std::countr_zero(at_or_after ? at_or_after : empty));
    next_start_[egress] = static_cast<uint8_t>(q + 1 == queues_ ? 0 : q + 1);
    return static_cast<uint16_t>(q);
  }

  BfcAssignment mode_;
  uint32_t queues_;
  uint64_t sticky_ns_;
  uint64_t all_mask_;
  std::unique_ptr<uint64_t[]> empty_;      // bit q set = queue q empty
  std::unique_ptr<uint8_t[]> next_start_;  // rotating search start per port
  Xorshift64 rng_;
  RelaxedCounter queue_collisions_;
};

}  // namespace sluice
