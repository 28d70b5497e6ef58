#include "lib/tm/flow_queues/flow_queues.h"

#include <algorithm>
#include <cassert>

#include "lib/tm/token_bucket_shaper.h"

namespace sluice {

namespace {
// FQ's first flow table and queue array; both double when full.
constexpr uint32_t kInitialFlows = 64;
constexpr uint32_t kInitialNodes = 256;
}  // namespace

FlowQueues::FlowQueues(const FlowQueueingConfig& cfg, uint32_t mtu_bytes)
    : per_flow_(cfg.kind == QueueingKind::kFairQueue),
      quantum_(std::max<uint32_t>(cfg.quantum_bytes, 1)),
      codel_on_(cfg.codel),
      codel_{cfg.codel_target_ns, cfg.codel_interval_ns, mtu_bytes, cfg.codel_ecn},
      flows_(per_flow_ ? kInitialFlows : 1) {
  if (!per_flow_) queues_.resize(std::max<uint32_t>(cfg.sfq_queues, 1));
  nodes_.reserve(kInitialNodes);
}

uint32_t FlowQueues::new_node() {
  if (free_node_ != kNone) {
    const uint32_t n = free_node_;
    free_node_ = nodes_[n].next;
    return n;
  }
  nodes_.push_back(Node{});  // grows by doubling: rare, not per packet
  return static_cast<uint32_t>(nodes_.size() - 1);
}

uint32_t FlowQueues::new_flow_queue(uint64_t flow) {
  uint32_t q;
  if (!free_queues_.empty()) {
    q = free_queues_.back();
    free_queues_.pop_back();
  } else {
    q = static_cast<uint32_t>(queues_.size());
    queues_.emplace_back();
  }
  queues_[q].flow = flow;
  if (!flows_.insert(flow, q)) {
    // The table is full: a larger one, filled from the queues that hold a
    // flow now (every queue not on the free list).
    uint32_t capacity = static_cast<uint32_t>(queues_.size()) * 2;
    KeyIndex bigger(capacity);
    std::vector<bool> is_free(queues_.size(), false);
    for (uint32_t f : free_queues_) is_free[f] = true;
    for (uint32_t i = 0; i < queues_.size(); ++i)
      if (!is_free[i]) bigger.insert(queues_[i].flow, i);
    flows_ = std::move(bigger);
  }
  return q;
}

void FlowQueues::push(uint64_t now_ns, uint64_t flow, const TmPacket& pkt, bool ecn_capable) {
  uint32_t q = queue_of(flow);
  if (q == kNone) q = new_flow_queue(flow);
  const uint32_t n = new_node();
  Node& node = nodes_[n];
  node.pkt = pkt;
  node.pkt.queue = 0;
  node.pkt.enqueue_ns = now_ns;
  node.next = kNone;
  node.ecn_capable = ecn_capable;
  Queue& qu = queues_[q];
  if (qu.tail == kNone) {
    qu.head = n;
    // Joins the end of the round.
    qu.next_active = kNone;
    if (active_tail_ == kNone) {
      active_head_ = q;
    } else {
      queues_[active_tail_].next_active = q;
    }
    active_tail_ = q;
    active_.add(1);
  } else {
    nodes_[qu.tail].next = n;
    if (!per_flow_ && qu.flow != flow) collisions_.add(1);
  }
  qu.tail = n;
  qu.flow = flow;
  qu.bytes += pkt.bytes;
  bytes_.add(pkt.bytes);
  packets_.add(1);
}

void FlowQueues::leave_round(uint32_t q) {
  Queue& qu = queues_[q];
  assert(active_head_ == q && qu.head == kNone);
  active_head_ = qu.next_active;
  if (active_head_ == kNone) active_tail_ = kNone;
  qu.next_active = kNone;
  qu.deficit = 0;
  qu.credited = false;
  active_.sub(1);
  if (per_flow_) {
    flows_.erase(qu.flow);
    free_queues_.push_back(q);
  }
}

FlowQueues::Popped FlowQueues::pop(uint64_t now_ns, TmPacket* out, unsigned max, int64_t* budget,
                                   uint64_t overhead, TmPacket* dropped, unsigned max_dropped) {
  assert(max <= 64);
  Popped r;
  while (r.sent < max && *budget >= 0 && active_head_ != kNone) {
    const uint32_t q = active_head_;
    Queue& qu = queues_[q];
    if (!qu.credited) {
      qu.deficit += quantum_;
      qu.credited = true;
    }
    if (nodes_[qu.head].pkt.bytes > qu.deficit) {
      // Its turn is over: to the end of the round.
      qu.credited = false;
      if (qu.next_active != kNone) {
        active_head_ = qu.next_active;
        queues_[active_tail_].next_active = q;
        active_tail_ = q;
        qu.next_active = kNone;
      }
      continue;
    }
    // Takes the head; CoDel may drop some first.
    uint32_t taken = kNone;
    auto take = [&](CodelPacket* cp) {
      if (qu.head == kNone) return false;
      taken = qu.head;
      const Node& node = nodes_[taken];
      qu.head = node.next;
      if (qu.head == kNone) qu.tail = kNone;
      qu.bytes -= node.pkt.bytes;
      bytes_.sub(node.pkt.bytes);
      packets_.sub(1);
      cp->enqueue_ns = node.pkt.enqueue_ns;
      cp->ecn_capable = node.ecn_capable;
      return true;
    };
    auto give_back = [&](uint32_t n) {
      nodes_[n].next = free_node_;
      free_node_ = n;
    };
    bool sent_one = true, marked = false;
    if (codel_on_) {
      auto bytes_left = [&] { return qu.bytes; };
      // A full drop list refuses: CoDel sends the packet instead and
      // drops at the next call (max_dropped is a burst; rarely reached).
      auto drop = [&] {
        if (r.dropped == max_dropped) return false;
        const TmPacket& p = nodes_[taken].pkt;
        dropped[r.dropped++] = p;
        r.dropped_bytes += p.bytes;
        codel_drops_.add(1);
        give_back(taken);
        taken = kNone;
        return true;
      };
      const CodelVerdict v = qu.codel.dequeue(now_ns, codel_, take, bytes_left, drop);
      sent_one = v != CodelVerdict::kNone;
      marked = v == CodelVerdict::kSendMarked;
      if (marked) codel_marks_.add(1);
    } else {
      take(&scratch_);
    }
    if (sent_one) {
      const TmPacket& p = nodes_[taken].pkt;
      qu.deficit -= p.bytes;
      *budget -= static_cast<int64_t>(TokenBucketShaper::wire_bytes(p.bytes, overhead));
      if (marked) r.marks |= uint64_t{1} << r.sent;
      r.bytes += p.bytes;
      out[r.sent++] = p;
      give_back(taken);
    }
    if (qu.head == kNone) leave_round(q);
  }
  return r;
}

void FlowQueues::reset() {
  for (auto& q : queues_) {
    q.head = q.tail = q.next_active = kNone;
    q.bytes = 0;
    q.deficit = 0;
    q.credited = false;
  }
  if (per_flow_) {
    queues_.clear();
    free_queues_.clear();
    flows_ = KeyIndex(kInitialFlows);
  }
  nodes_.clear();
  free_node_ = kNone;
  active_head_ = active_tail_ = kNone;
  bytes_.set(0);
  packets_.set(0);
  active_.set(0);
}

}  // namespace sluice
