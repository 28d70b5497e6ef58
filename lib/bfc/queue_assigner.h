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

#include <cstdint>
#include <memory>

#include "lib/bfc/flow_table.h"
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
  // `e`; records it in the entry (and marks the entry used).
  uint16_t assign(uint16_t egress, uint32_t hash, FlowEntry& e, uint64_t now_ns);

  void on_queue_nonempty(uint16_t egress, uint16_t q) { empty_[egress] &= ~(uint64_t{1} << q); }
  void on_queue_empty(uint16_t egress, uint16_t q) { empty_[egress] |= uint64_t{1} << q; }
  uint64_t empty_mask(uint16_t egress) const { return empty_[egress]; }

  uint64_t queue_collisions() const { return queue_collisions_.get(); }
  uint32_t queues_per_port() const { return queues_; }

 private:
  bool keeps_queue(const FlowEntry& e, uint64_t now_ns) const;
  uint16_t pick_dynamic(uint16_t egress);

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
