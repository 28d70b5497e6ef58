#include "lib/tm/egress_port.h"

#include <algorithm>
#include <bit>
#include <stdexcept>

namespace sluice {

namespace {
uint32_t checked_queues(uint32_t n, QueueingKind kind) {
  if (kind != QueueingKind::kClass) return 1;  // queue 0 stands for all the flows' queues
  if (n < 1 || n > EgressPort::kMaxQueues) {
    throw std::invalid_argument("egress port: num_queues must be 1..64");
  }
  return n;
}
}  // namespace

EgressPort::EgressPort(const EgressPortConfig& cfg, SharedBuffer* buffer)
    : num_queues_(checked_queues(cfg.num_queues, cfg.queueing.kind)),
      buffer_(buffer),
      queues_(std::make_unique<DataQueue[]>(num_queues_)),
      control_(cfg.control_capacity),
      shaper_(cfg.rate_bps,
              cfg.burst_bytes != 0 ? cfg.burst_bytes : default_burst_bytes(cfg.rate_bps),
              cfg.wire_overhead_bytes),
      ecn_(cfg.ecn, cfg.rng_seed),
      sched_(num_queues_, cfg.drr_quantum_bytes, cfg.scheduler,
             cfg.priority_last && num_queues_ > 1) {
  if (buffer == nullptr) throw std::invalid_argument("egress port: no shared buffer");
  ecn_lowest_marked_ = ecn_.lowest_marked();
  const bool by_flow = cfg.queueing.kind != QueueingKind::kClass;
  for (uint32_t q = 0; q < num_queues_; ++q) queues_[q].ring.init(by_flow ? 1 : cfg.queue_capacity);
  if (cfg.queueing.kind == QueueingKind::kPfabric) {
    pfabric_ = std::make_unique<PfabricQueue>(cfg.queueing.pfabric_buffer_bytes);
  } else if (by_flow) {
    flowq_ = std::make_unique<FlowQueues>(cfg.queueing, cfg.mtu_bytes + 14);
    unlimited_buffer_ = cfg.queueing.unlimited_buffer;
    dequeue_dropped_ = std::make_unique<TmPacket[]>(kMaxDequeueDropped);
  }
  by_flow_ = by_flow;
}

EnqueueResult EgressPort::enqueue_ranked(uint64_t now_ns, uint64_t flow, uint32_t rank,
                                         const TmPacket& pkt, TmPacket* evicted,
                                         unsigned max_evicted, unsigned* n_evicted) {
  QueueStats& st = queues_[0].stats;
  TmPacket p = pkt;
  p.queue = 0;
  const bool queued = pfabric_->enqueue(now_ns, p, flow, rank, evicted, max_evicted, n_evicted);
  const auto priority = static_cast<unsigned>(DropReason::kPriorityDrop);
  if (*n_evicted != 0) st.drops[priority].add(*n_evicted);
  if (!queued) {
    st.drops[priority].add(1);
    return {EnqueueVerdict::kDropped, DropReason::kPriorityDrop};
  }
  sched_.set_backlogged(0);
  st.enqueued_packets.add(1);
  st.enqueued_bytes.add(pkt.bytes);
  return {EnqueueVerdict::kEnqueued, DropReason::kCount};
}

EnqueueResult EgressPort::enqueue_flow(uint64_t now_ns, uint64_t flow, const TmPacket& pkt,
                                       bool ecn_capable) {
  QueueStats& st = queues_[0].stats;
  const uint32_t bytes = pkt.bytes;
  const uint64_t depth = flowq_->queue_bytes_of(flow);
  if (!unlimited_buffer_) {
    DropReason why;
    if (!buffer_->admits(depth, bytes, &why)) {
      st.drops[static_cast<unsigned>(why)].add(1);
      return {EnqueueVerdict::kDropped, why};
    }
    buffer_->charge(bytes);
  }
  flowq_->push(now_ns, flow, pkt, ecn_capable);
  sched_.set_backlogged(0);
  st.enqueued_packets.add(1);
  st.enqueued_bytes.add(bytes);
  if (should_mark(depth, ecn_capable)) {
    st.ecn_marks.add(1);
    return {EnqueueVerdict::kEnqueuedMarked, DropReason::kCount};
  }
  return {EnqueueVerdict::kEnqueued, DropReason::kCount};
}

unsigned EgressPort::dequeue_flows(uint64_t now_ns, TmPacket* out, unsigned n, unsigned max) {
  const bool shaped = !shaper_.unlimited();
  const int64_t start = shaped ? shaper_.wire_budget() : INT64_MAX / 2;
  int64_t budget = start;
  TmPacket* const first = out + n;
  QueueStats& st = queues_[0].stats;
  unsigned sent = 0;
  uint64_t bytes = 0;
  bool empty;
  if (pfabric_) {
    // pFabric's own buffer (nothing charged to the shared one), no CoDel.
    const uint64_t overhead = shaper_.overhead_bytes();
    while (n + sent < max && budget >= 0 && pfabric_->dequeue(&first[sent])) {
      budget -= static_cast<int64_t>(TokenBucketShaper::wire_bytes(first[sent].bytes, overhead));
      bytes += first[sent++].bytes;
    }
    empty = pfabric_->packets() == 0;
  } else {
    const FlowQueues::Popped r =
        flowq_->pop(now_ns, first, max - n, &budget, shaper_.overhead_bytes(),
                    dequeue_dropped_.get(), kMaxDequeueDropped);
    sent = r.sent;
    bytes = r.bytes;
    if (!unlimited_buffer_) buffer_->release(r.bytes + r.dropped_bytes);
    if (r.dropped != 0) st.drops[static_cast<unsigned>(DropReason::kCodel)].add(r.dropped);
    dequeue_dropped_count_ = static_cast<uint8_t>(r.dropped);
    dequeue_marks_ = r.marks << n;
    empty = flowq_->empty();
  }
  if (shaped) shaper_.spend_wire(static_cast<uint64_t>(start - budget));
  ResidenceBatch residence(now_ns);
  for (unsigned i = 0; i < sent; ++i) residence.add(residence_, first[i].enqueue_ns, i);
  residence.publish(residence_, sent);
  st.dequeued_packets.add(sent);
  st.dequeued_bytes.add(bytes);
  if (empty) sched_.set_empty(0);
  return n + sent;
}

EnqueueResult EgressPort::refuse(uint16_t queue, uint32_t bytes) {
  DropReason why;
  if (buffer_->admits(queues_[queue].ring.bytes(), bytes, &why)) why = DropReason::kQueueFull;
  queues_[queue].stats.drops[static_cast<unsigned>(why)].add(1);
  return {EnqueueVerdict::kDropped, why};
}

void EgressPort::expire_pauses(uint64_t now_ns) {
  uint64_t next = UINT64_MAX;
  for (uint64_t m = sched_.paused_mask(); m != 0; m &= m - 1) {
    unsigned q = std::countr_zero(m);
    if (pause_until_ns_[q] <= now_ns) {
      sched_.clear_paused(q);
    } else {
      next = std::min(next, pause_until_ns_[q]);
    }
  }
  next_expiry_ns_ = next;
}

uint64_t EgressPort::next_event_ns(uint64_t now_ns) const {
  uint64_t t;
  if (!control_.empty()) {
    t = now_ns;
  } else {
    uint64_t backlogged = sched_.backlogged_mask();
    if (backlogged == 0) return UINT64_MAX;
    uint64_t paused = sched_.paused_mask();
    if ((backlogged & ~paused) != 0) {
      t = now_ns;
    } else {
      t = UINT64_MAX;
      for (uint64_t m = backlogged & paused; m != 0; m &= m - 1) {
        t = std::min(t, pause_until_ns_[std::countr_zero(m)]);
      }
    }
    t = std::max({t, now_ns, port_pause_until_ns_});
    if (t == UINT64_MAX) return t;
  }
  return std::max(t, shaper_.next_ready_ns());
}

uint64_t EgressPort::queued_packets() const {
  uint64_t s = control_.packets();
  if (flowq_) s += flowq_->packets();
  if (pfabric_) s += pfabric_->packets();
  for (uint32_t q = 0; q < num_queues_; ++q) s += queues_[q].ring.packets();
  return s;
}

uint64_t EgressPort::data_queued_bytes() const {
  uint64_t s = flowq_ ? flowq_->bytes() : pfabric_ ? pfabric_->bytes() : 0;
  for (uint32_t q = 0; q < num_queues_; ++q) s += queues_[q].ring.bytes();
  return s;
}

uint64_t EgressPort::data_sent_packets() const {
  uint64_t s = 0;
  for (uint32_t q = 0; q < num_queues_; ++q) s += queues_[q].stats.dequeued_packets.get();
  return s;
}

uint64_t EgressPort::data_sent_bytes() const {
  uint64_t s = 0;
  for (uint32_t q = 0; q < num_queues_; ++q) s += queues_[q].stats.dequeued_bytes.get();
  return s;
}

}  // namespace sluice
