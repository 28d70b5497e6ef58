#pragma once
// The data queues of a port that queues by flow instead of by class:
//
//  - stochastic fair queueing (SFQ; McKenney, "Stochastic Fairness
//    Queueing"): each flow's hash picks one of N queues, so flows that
//    collide share a queue;
//  - ideal per-flow fair queueing (FQ): a queue per flow, made when the
//    flow's first packet arrives and given back when it empties, so any
//    number of flows each have their own.
//
// Either way the backlogged queues are served by deficit round robin
// (Shreedhar & Varghese, "Efficient Fair Queuing Using Deficit Round
// Robin") with a quantum of at least one frame: a queue that becomes
// backlogged joins the end of the round, each visit adds a quantum to its
// deficit and sends while the head fits, and a queue that empties leaves
// the round and forfeits its deficit. Optionally each queue runs CoDel
// (codel.h) as its packets leave: SFQ with CoDel is sfqCoDel.
//
// Descriptors live in one pool of nodes linked per queue, so memory follows
// the packets queued, not queues x capacity; the pool and FQ's flow table
// grow (doubling) when they run out, which happens a few times in a run,
// never per packet once the run has reached its deepest backlog.
//
// Time is always an argument; single writer (the lcore that owns the port).

#include <cstdint>
#include <vector>

#include "lib/common/key_index.h"
#include "lib/common/relaxed_counter.h"
#include "lib/config/config.h"
#include "lib/tm/flow_queues/codel.h"
#include "lib/tm/tm_packet.h"

namespace sluice {

class FlowQueues {
 public:
  static constexpr uint32_t kNone = UINT32_MAX;

  FlowQueues(const FlowQueueingConfig& cfg, uint32_t mtu_bytes);
  FlowQueues(const FlowQueues&) = delete;
  FlowQueues& operator=(const FlowQueues&) = delete;

  // The queue index a flow's packets take: its hash modulo N (SFQ), or the
  // flow's own queue (FQ, kNone when it has none yet).
  uint32_t queue_of(uint64_t flow) const {
    if (!per_flow_) return static_cast<uint32_t>(flow % queues_.size());
    return flows_.find(flow);
  }
  // Bytes the flow's queue holds (0 when it has none): buffer admission's
  // dynamic threshold is judged per queue.
  uint64_t queue_bytes_of(uint64_t flow) const {
    const uint32_t q = queue_of(flow);
    return q == kNone ? 0 : queues_[q].bytes;
  }

  // Queues pkt (its enqueue_ns set) at the end of its flow's queue.
  void push(uint64_t now_ns, uint64_t flow, const TmPacket& pkt, bool ecn_capable);

  // What pop() did beyond sending: packets CoDel dropped (the caller frees
  // them and counts them) and which of the packets sent are to be marked CE.
  struct Popped {
    unsigned sent = 0;
    uint64_t bytes = 0;    // bytes sent
    uint64_t marks = 0;    // bit i: out[i] is to be marked CE (CoDel with ECN)
    unsigned dropped = 0;  // CoDel drops, in dropped[0..dropped)
    uint64_t dropped_bytes = 0;
  };
  // Up to `max` packets (at most 64) in DRR order, while budget (wire bytes
  // of the shaper, see TokenBucketShaper::wire_budget) is not negative; each
  // costs its bytes + overhead. CoDel drops go to dropped[] (room for
  // max_dropped; a queue's CoDel stops dropping for this call when full).
  Popped pop(uint64_t now_ns, TmPacket* out, unsigned max, int64_t* budget, uint64_t overhead,
             TmPacket* dropped, unsigned max_dropped);

  // Every queued packet (shutdown), in no particular order.
  template <class F>
  void drain(F&& fn) {
    for (uint32_t q = 0; q < queues_.size(); ++q) {
      for (uint32_t n = queues_[q].head; n != kNone;) {
        fn(static_cast<const TmPacket&>(nodes_[n].pkt));
        n = nodes_[n].next;
      }
    }
    reset();
  }

  bool empty() const { return active_head_ == kNone; }
  uint64_t bytes() const { return bytes_.get(); }
  uint64_t packets() const { return packets_.get(); }
  // Queues backlogged now (for the scraper).
  uint64_t active_queues() const { return active_.get(); }
  // The most queues FQ has held at once; SFQ: its N.
  uint64_t queues_allocated() const { return queues_.size(); }
  uint32_t num_hashed_queues() const {
    return per_flow_ ? 0 : static_cast<uint32_t>(queues_.size());
  }
  bool per_flow() const { return per_flow_; }
  bool codel() const { return codel_on_; }
  const CodelParams& codel_params() const { return codel_; }
  uint64_t codel_drops() const { return codel_drops_.get(); }
  uint64_t codel_marks() const { return codel_marks_.get(); }
  // Times a packet's flow found its SFQ queue already holding another
  // flow's packets (a collision the hash made).
  uint64_t collisions() const { return collisions_.get(); }

 private:
  struct Node {
    TmPacket pkt;
    uint32_t next;
    bool ecn_capable;
  };
  struct Queue {
    uint32_t head = kNone, tail = kNone;
    uint32_t next_active = kNone;  // the round, as a singly linked list
    uint64_t bytes = 0;
    int64_t deficit = 0;
    bool credited = false;  // this visit's quantum was added
    uint64_t flow = 0;      // FQ: the flow (to unmap it); SFQ: the last flow queued
    CodelState codel;
  };

  uint32_t new_node();
  uint32_t new_flow_queue(uint64_t flow);
  void leave_round(uint32_t q);  // q is the round's head and is empty
  void reset();

  bool per_flow_;
  uint32_t quantum_;
  bool codel_on_;
  CodelParams codel_;
  std::vector<Queue> queues_;
  std::vector<uint32_t> free_queues_;  // FQ: queues given back
  KeyIndex flows_;                     // FQ: flow -> queue
  std::vector<Node> nodes_;
  uint32_t free_node_ = kNone;
  uint32_t active_head_ = kNone, active_tail_ = kNone;
  CodelPacket scratch_{};  // what a take without CoDel fills
  RelaxedCounter bytes_, packets_, active_;
  RelaxedCounter codel_drops_, codel_marks_, collisions_;
};

}  // namespace sluice
