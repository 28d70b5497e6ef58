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

#include "lib/mechanisms/bfc/flow_table.h"
#include "lib/common/relaxed_counter.h"
#include "lib/common/saturating.h"
#include "lib/common/xorshift.h"

namespace sluice {

enum class BfcAssignment : uint8_t { kDynamic, kStochastic, kSingle };

// A queue chosen but not yet taken: pick() decides, commit() makes it so once
// the packet is really enqueued (a dropped packet changes nothing).
struct QueuePick {
  enum class Kind : uint8_t { kFixed, kKept, kEmpty, kRandom };
  uint16_t queue = 0;
  Kind kind = Kind::kFixed;
};

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
  // `e`, changing nothing. Per packet, so defined inline below, as are the
  // helpers it calls.
  QueuePick pick(uint16_t egress, uint32_t hash, const FlowEntry& e, uint64_t now_ns) const {
    if (mode_ != BfcAssignment::kDynamic) [[unlikely]]
      return QueuePick{
          mode_ == BfcAssignment::kSingle ? uint16_t{0} : static_cast<uint16_t>(hash % queues_),
          QueuePick::Kind::kFixed};
    if (keeps_queue(e, now_ns)) return QueuePick{e.queue, QueuePick::Kind::kKept};
    return pick_dynamic(egress);
  }

  // The packet was enqueued on pick p: records the queue in the entry (and
  // marks it used), moves the rotation past an empty-queue pick, and counts
  // and redraws after a random one.
  void commit(uint16_t egress, const QueuePick& p, FlowEntry& e) {
    e.queue = p.queue;
    e.used = true;
    if (p.kind == QueuePick::Kind::kEmpty) {
      ports_[egress].next_start = static_cast<uint8_t>(p.queue + 1u == queues_ ? 0 : p.queue + 1u);
    } else if (p.kind == QueuePick::Kind::kRandom) {
      queue_collisions_.add(1);
      next_random_ = rng_.next32();
    }
  }

  // pick() and commit() at once (for callers that never drop).
  uint16_t assign(uint16_t egress, uint32_t hash, FlowEntry& e, uint64_t now_ns) {
    const QueuePick p = pick(egress, hash, e, now_ns);
    commit(egress, p, e);
    return p.queue;
  }

  void on_queue_nonempty(uint16_t egress, uint16_t q) {
    ports_[egress].empty &= ~(uint64_t{1} << q);
  }
  void on_queue_empty(uint16_t egress, uint16_t q) { ports_[egress].empty |= uint64_t{1} << q; }
  uint64_t empty_mask(uint16_t egress) const { return ports_[egress].empty; }

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

  QueuePick pick_dynamic(uint16_t egress) const {
    const uint64_t empty = ports_[egress].empty & all_mask_;
    if (empty == 0) {
      const uint64_t q = (static_cast<uint64_t>(next_random_) * queues_) >> 32;
      return QueuePick{static_cast<uint16_t>(q), QueuePick::Kind::kRandom};
    }
    // First empty queue at or after the start, wrapping around.
    const unsigned start = ports_[egress].next_start;
    const uint64_t at_or_after = empty & (~uint64_t{0} << start);
    const unsigned q = static_cast<unsigned>(std::countr_zero(at_or_after ? at_or_after : empty));
    return QueuePick{static_cast<uint16_t>(q), QueuePick::Kind::kEmpty};
  }

  BfcAssignment mode_;
  uint32_t queues_;
  uint64_t sticky_ns_;
  uint64_t all_mask_;
  // What a pick reads of its egress port, side by side.
  struct PortState {
    uint64_t empty = 0;      // bit q set = queue q empty
    uint8_t next_start = 0;  // rotating search start
  };
  std::unique_ptr<PortState[]> ports_;
  Xorshift64 rng_;
  uint32_t next_random_;  // the next random pick's draw, taken on commit
  RelaxedCounter queue_collisions_;
};

}  // namespace sluice
