#pragma once
// One lcore's share of a BFC switch: the rules that run where the egress
// ports live (SPEC 3, step 3 and 5). It joins the flow table, the queue
// assigner and the pause counters so that switch/ makes three calls per
// packet and does only the I/O:
//
//   assign()       before the traffic manager: which data queue (decides
//                  only; a packet the traffic manager drops leaves no trace)
//   on_enqueued()  after the traffic manager accepted it: takes the entry and
//                  the queue, counts collisions, flags, maybe pauses
//   on_departure() when it left (sent, or drained at stop): maybe resume
//   on_passed()    instead of the last two, for a packet that went through
//                  its empty queue at once (real time's cut-through)
//
// The shard sees the egress ports its lcore owns, and every ingress port of
// the switch (any of them may feed those egress ports). docs/mechanisms/bfc.md.
// Single writer; no allocation after construction.

#include <cstdint>
#include <memory>
#include <span>

#include "lib/common/relaxed_counter.h"
#include "lib/mechanisms/bfc/flow_table.h"
#include "lib/mechanisms/bfc/pause_counters.h"
#include "lib/mechanisms/bfc/pause_threshold.h"
#include "lib/mechanisms/bfc/queue_assigner.h"

namespace sluice {

struct BfcShardConfig {
  BfcAssignment mode = BfcAssignment::kDynamic;
  // Per port index (sizes every per-port table): the peer can be paused, a
  // switch upstream or a BFC NIC (switch/mechanisms/bfc/bfc_builder.cc).
  std::span<const bool> switch_facing;
  // Per port index: how many queues its upstream has (a BFC NIC's, up to
  // 4096); empty: kMaxUpstreamQueues each.
  std::span<const uint16_t> upstream_queues;
  std::span<const uint64_t> rate_bps;  // per port index: the egress rate in Th
  std::span<const bool> egress_ports;  // per port index: owned by this shard (a table slice)
  uint32_t queues_per_port = 32;
  uint32_t flow_table_factor = FlowTable::kDefaultFactor;
  uint64_t hop_rtt_ns = 10'000;  // the largest one-hop RTT of the switch's ports
  uint64_t sticky_ns = 20'000;   // 2 x hop RTT by default
  uint64_t th_ns = 0;            // Th = th_ns x rate / N_active; 0: hop_rtt_ns
  uint64_t rng_seed = 1;
};

// What the caller keeps with an enqueued packet until it leaves.
struct BfcTicket {
  uint32_t entry = 0;  // flow-table index
  uint16_t ingress = 0;
  uint16_t upstream_queue = kNoUpstreamQueue;
  bool flagged = false;
  // From assign() to on_enqueued() only (not kept with the packet).
  uint32_t hash = 0;
  QueuePick pick;
};

class BfcShard {
 public:
  // Throws std::invalid_argument for inconsistent sizes (see the parts).
  explicit BfcShard(const BfcShardConfig& cfg);

  // The queue for a packet of flow `hash` to `egress`; fills the ticket and
  // changes nothing: a packet dropped before on_enqueued() moves no entry,
  // rotation or counter. (The per-packet calls are defined inline below.)
  uint16_t assign(uint16_t egress, uint32_t hash, uint64_t now_ns, BfcTicket* ticket) const {
    ticket->entry = table_.index(egress, hash);
    ticket->hash = hash;
    ticket->pick = assigner_.pick(egress, hash, table_.at(ticket->entry), now_ns);
    return ticket->pick.queue;
  }

  // The traffic manager took the packet into queue `q` (= the ticket's pick)
  // of `egress`, which held queue_bytes before it; `paused_mask` is the
  // egress port's queues paused by its own downstream. kPause: send
  // BFC_PAUSE(ticket->upstream_queue) out of ticket->ingress.
  BfcSignal on_enqueued(uint16_t egress, uint16_t q, uint64_t queue_bytes, uint64_t paused_mask,
                        uint64_t now_ns, BfcTicket* ticket) {
    assigner_.commit(egress, ticket->pick, table_.at(ticket->entry));
    table_.on_enqueue(ticket->entry, ticket->hash, now_ns);
    // Th counts the queue the packet joins as active even if it was empty.
    assigner_.on_queue_nonempty(egress, q);
    const uint64_t th = judge_th(egress, ~assigner_.empty_mask(egress) & all_queues_, paused_mask);
    ticket->flagged = false;
    if (queue_bytes <= th) return BfcSignal::kNone;  // never flagged (PauseCounters::on_enqueue)
    const EnqueueDecision d =
        counters_.on_enqueue(ticket->ingress, ticket->upstream_queue, egress, queue_bytes, th);
    ticket->flagged = d.flagged;
    return d.signal;
  }

  // The packet left (queue_empty: its queue is empty now). kResume: send
  // BFC_RESUME(ticket.upstream_queue) out of ticket.ingress.
  BfcSignal on_departure(uint16_t egress, uint16_t q, bool queue_empty, const BfcTicket& ticket,
                         uint64_t now_ns) {
    table_.on_departure(ticket.entry, now_ns);
    if (queue_empty) assigner_.on_queue_empty(egress, q);
    if (!ticket.flagged) return BfcSignal::kNone;
    return counters_.on_flagged_departure(ticket.ingress, ticket.upstream_queue);
  }

  // on_enqueued() into empty queue q (queue_bytes 0) then on_departure()
  // with the queue empty again, at one instant: what a packet leaves
  // behind that the traffic manager would have sent at once (real time's
  // cut-through, docs/mechanisms/bfc.md "In the data path"). An empty
  // queue never flags (0 <= Th), so nothing is paused or resumed, and the
  // caller keeps no ticket: the entry keeps the queue and the time, the
  // rotation moves, the gauges count q as active, q stays empty. Returns
  // the Th it judged by (last_threshold()).
  uint64_t on_passed(uint16_t egress, uint16_t q, uint64_t paused_mask, uint64_t now_ns,
                     const BfcTicket& ticket) {
    assigner_.commit(egress, ticket.pick, table_.at(ticket.entry));
    table_.on_pass(ticket.entry, ticket.hash, now_ns);
    assigner_.on_queue_empty(egress, q);
    return judge_th(egress, (~assigner_.empty_mask(egress) & all_queues_) | uint64_t{1} << q,
                    paused_mask);
  }

  // Th of `egress` for the given paused set, in bytes.
  uint64_t threshold(uint16_t egress, uint64_t paused_mask) const {
    const uint64_t nonempty = ~assigner_.empty_mask(egress) & all_queues_;
    return th_by_active_[egress * kThSlots + active_queue_count(nonempty, paused_mask)];
  }

  PauseCounters& counters() { return counters_; }
  const PauseCounters& counters() const { return counters_; }
  const FlowTable& table() const { return table_; }
  const QueueAssigner& assigner() const { return assigner_; }
  uint64_t hop_rtt_ns() const { return hop_rtt_ns_; }
  // The time Th stands for at line rate (the hop RTT unless configured).
  uint64_t th_ns() const { return th_ns_; }

  // Gauges per egress port, as of its last enqueue (for the scraper).
  uint64_t last_threshold(uint16_t egress) const { return last_[egress].th.get(); }
  uint64_t last_active_queues(uint16_t egress) const { return last_[egress].active.get(); }

 private:
  static constexpr uint32_t kThSlots = 65;  // N_active 0..64

  // Th of `egress` with these queues non-empty and paused, kept for the
  // gauges (last_threshold(), last_active_queues()).
  uint64_t judge_th(uint16_t egress, uint64_t nonempty, uint64_t paused_mask) {
    const uint32_t active = active_queue_count(nonempty, paused_mask);
    const uint64_t th = th_by_active_[egress * kThSlots + active];
    last_[egress].th.set(th);
    last_[egress].active.set(active);
    return th;
  }

  FlowTable table_;
  QueueAssigner assigner_;
  PauseCounters counters_;
  uint64_t hop_rtt_ns_;
  uint64_t th_ns_;
  uint64_t all_queues_;
  // pause_threshold_bytes(th_ns_, rate of port p, n) at [p * kThSlots + n],
  // computed once: the 128-bit division is not done per packet.
  std::unique_ptr<uint64_t[]> th_by_active_;
  struct Gauges {
    RelaxedCounter th, active;
  };
  std::unique_ptr<Gauges[]> last_;
};

}  // namespace sluice
