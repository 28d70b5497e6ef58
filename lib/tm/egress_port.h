#pragma once
// The traffic manager of one egress port: a strict-priority control queue,
// N data queues scheduled by DRR (or strict priority), admission into a
// shared buffer with dynamic thresholds, ECN marking at enqueue, per-queue and
// per-port pauses with expiry, a token-bucket shaper at the port's rate, and
// residence-time measurement. docs/traffic-manager.md describes the model.
//
// Single writer: the lcore that owns the port. Counters are RelaxedCounters
// so the metrics scraper may read them. Time is always an argument.
//
// Per-packet cost: enqueue touches only the queue it fills (ring, depth,
// stats), the buffer and the backlog bit; dequeue_burst sends runs of packets
// from the queue the scheduler picks and tallies them in registers, updating
// each queue's depth and stats once per run and the buffer and residence
// histogram once per burst. Port totals are sums over the queues, on read.

#include <algorithm>
#include <cassert>
#include <cstdint>
#include <memory>

#include "lib/common/drop_reason.h"
#include "lib/common/relaxed_counter.h"
#include "lib/config/config.h"
#include "lib/tm/disciplines/ecn_marker.h"
#include "lib/tm/flow_queues/flow_queues.h"
#include "lib/tm/latency_histogram.h"
#include "lib/tm/packet_queue.h"
#include "lib/tm/pfabric/pfabric_queue.h"
#include "lib/tm/residence_batch.h"
#include "lib/tm/schedulers/drr_scheduler.h"
#include "lib/tm/shared_buffer.h"
#include "lib/tm/tm_packet.h"
#include "lib/tm/token_bucket_shaper.h"

namespace sluice {

struct EgressPortConfig {
  uint32_t num_queues = 32;  // 1..64
  // The last queue goes before the others whenever it may (replies).
  bool priority_last = false;
  uint32_t queue_capacity = 4096;  // packets per data queue, rounded up to a power of two
  uint32_t control_capacity = 256;
  SchedulerKind scheduler = SchedulerKind::kDrr;
  uint32_t drr_quantum_bytes = 1600;
  uint64_t rate_bps = 0;              // 0 = unshaped
  uint64_t burst_bytes = 0;           // 0 = default: max(16 KiB, rate x 10 us)
  uint32_t wire_overhead_bytes = 24;  // preamble 8 + FCS 4 + inter-frame gap 12
  EcnConfig ecn;
  uint64_t rng_seed = 1;
  // Data queued by flow (SFQ, FQ) instead of in num_queues class queues.
  FlowQueueingConfig queueing;
  uint32_t mtu_bytes = 1500;  // CoDel's "maxpacket" is one frame of it
};

// The shaper burst EgressPort uses when EgressPortConfig::burst_bytes is 0.
constexpr uint64_t default_burst_bytes(uint64_t rate_bps) {
  uint64_t ten_us = rate_bps / 800'000;  // rate x 10 us / 8 bits
  return ten_us > 16384 ? ten_us : 16384;
}

struct QueueStats {
  RelaxedCounter enqueued_packets, enqueued_bytes;
  RelaxedCounter dequeued_packets, dequeued_bytes;
  RelaxedCounter ecn_marks;
  RelaxedCounter drops[kDropReasonCount];
};

class alignas(64) EgressPort {
 public:
  static constexpr uint32_t kMaxQueues = DrrScheduler::kMaxQueues;

  // Throws std::invalid_argument for num_queues outside 1..64 or a bad
  // shaper / ECN configuration. `buffer` must outlive the port.
  EgressPort(const EgressPortConfig& cfg, SharedBuffer* buffer);
  EgressPort(const EgressPort&) = delete;
  EgressPort& operator=(const EgressPort&) = delete;

  // Data packet into `queue` (< num_queues()): buffer admission (dynamic
  // threshold), then ring capacity (kQueueFull), then the ECN decision on the
  // queue length the packet finds. Counts drops and marks per queue.
  EnqueueResult enqueue(uint64_t now_ns, uint16_t queue, const TmPacket& pkt, bool ecn_capable) {
    return push<true>(now_ns, queue, pkt, ecn_capable);
  }
  // A packet the switch already holds in its buffer elsewhere (released
  // from a Floodgate VOQ, whose charge the caller has just given back): it
  // was admitted once, so it is charged without a second test and only the
  // ring's capacity can refuse it.
  EnqueueResult enqueue_held(uint64_t now_ns, uint16_t queue, const TmPacket& pkt,
                             bool ecn_capable) {
    return push<false>(now_ns, queue, pkt, ecn_capable);
  }

  // Ports that queue by flow (queues_by_flow()): a data packet of `flow`
  // (a 64-bit hash of its 5-tuple) into its flow's queue. Admission judges
  // the dynamic threshold on that queue's bytes (none with an unlimited
  // buffer); the ECN decision likewise. Drops and marks are counted as
  // queue 0's.
  EnqueueResult enqueue_flow(uint64_t now_ns, uint64_t flow, const TmPacket& pkt, bool ecn_capable);
  // pFabric ports: the packet's rank (its flow's remaining bytes; smaller
  // goes first) decides service and, when the port's own small buffer is
  // full, which packet is dropped: the arrival (kDropped, kPriorityDrop) or
  // queued ones, which go to evicted[0..*n_evicted) for the caller to free.
  EnqueueResult enqueue_ranked(uint64_t now_ns, uint64_t flow, uint32_t rank, const TmPacket& pkt,
                               TmPacket* evicted, unsigned max_evicted, unsigned* n_evicted);
  bool queues_by_flow() const { return by_flow_; }
  bool ranked() const { return pfabric_ != nullptr; }
  const FlowQueues* flow_queues() const { return flowq_.get(); }
  const PfabricQueue* pfabric_queue() const { return pfabric_.get(); }
  // After dequeue_burst on a port that queues by flow: the packets CoDel
  // dropped as they left (the caller frees them), and which of the packets
  // returned CoDel marked (bit i: out[i] is to be marked CE).
  unsigned dequeue_dropped(const TmPacket** out) const {
    *out = dequeue_dropped_.get();
    return dequeue_dropped_count_;
  }
  uint64_t dequeue_marks() const { return dequeue_marks_; }

 private:
  template <bool kAdmit>
  EnqueueResult push(uint64_t now_ns, uint16_t queue, const TmPacket& pkt, bool ecn_capable) {
    assert(queue < num_queues_);
    DataQueue& dq = queues_[queue];
    PacketQueue& pq = dq.ring;
    const uint32_t bytes = pkt.bytes;  // read before the ring stores (they may alias pkt)
    const uint64_t depth = pq.bytes();
    if constexpr (kAdmit) {
      if (!buffer_->try_charge(depth, bytes)) [[unlikely]]
        return refuse(queue, bytes);
    } else {
      buffer_->charge(bytes);
    }
    if (!pq.try_push(pkt, bytes, depth, queue, now_ns)) [[unlikely]] {
      buffer_->release(bytes);
      return refuse(queue, bytes);
    }
    const bool mark = should_mark(depth, ecn_capable);
    sched_.set_backlogged(queue);
    QueueStats& st = dq.stats;
    st.enqueued_packets.add(1);
    st.enqueued_bytes.add(bytes);
    if (mark) [[unlikely]] {
      st.ecn_marks.add(1);
      return {EnqueueVerdict::kEnqueuedMarked, DropReason::kCount};
    }
    return {EnqueueVerdict::kEnqueued, DropReason::kCount};
  }

 public:
  // No data or control frame waits: dequeue_burst would return none and
  // change nothing a later call reads (the shaper's bucket, refilled from
  // the time it last advanced, ends the same).
  bool holds_nothing() const { return sched_.backlogged_mask() == 0 && control_.empty(); }
  // Whether a data packet for `queue` would, enqueued now, be the one the
  // next dequeue_burst at now_ns takes at once: the port holds nothing
  // (data or control), neither the queue nor the port is paused, no pause
  // is due to end (dequeue would end it first), and a shaped port's
  // bucket, advanced to now_ns as that dequeue_burst would advance it,
  // holds tokens (TokenBucketShaper: a frame may leave while they are not
  // negative); a port that queues by class. pass() and cut_summed() then
  // charge the packet's wire bytes, as that dequeue_burst would.
  bool can_cut(uint64_t now_ns, uint16_t queue) {
    if (!idle_for(now_ns, queue)) return false;
    if (shaper_.unlimited()) return true;
    shaper_.advance(now_ns);
    return shaper_.has_tokens();
  }
  bool shaped() const { return !shaper_.unlimited(); }
  // A run's next pass to `queue` at the instant of a pass can_cut()
  // allowed: the port is as that pass left it (holding nothing, no pause
  // due to end), so only this queue's own pause is left to ask.
  bool run_unpaused(uint16_t queue) const { return ((sched_.paused_mask() >> queue) & 1) == 0; }
  // A run's next pass on a shaped port (after can_cut() at the same
  // instant): the bucket still holds tokens, and then pays for a frame of
  // `bytes`; false, and nothing charged, when it holds none.
  bool pass_tokens(uint32_t bytes) {
    if (!shaper_.has_tokens()) return false;
    pay_wire(bytes);
    return true;
  }
  // enqueue() then that dequeue_burst(), for a packet can_cut() allows,
  // without the ring: the same buffer admission, ECN decision, counts,
  // residence (0), scheduler state and bucket. The caller sends the packet
  // now unless it was dropped.
  EnqueueResult pass(uint16_t queue, const TmPacket& pkt, bool ecn_capable) {
    const EnqueueResult r = cut_summed(queue, pkt.bytes, ecn_capable);
    pass_publish();
    return r;
  }

  // pass() in two halves, for a run of packets (real time's cut-through,
  // which sends a burst at a time): per packet the buffer admission and
  // ECN decision, while the counts, residence and scheduler state are
  // summed until pass_publish(), which must come before the next
  // dequeue_burst.
  EnqueueResult pass_summed(uint16_t queue, uint32_t bytes, bool ecn_capable) {
    DropReason why;
    if (!buffer_->admits(0, bytes, &why)) [[unlikely]]
      return refuse(queue, bytes);
    pass_to(queue);
    const bool mark = should_mark(0, ecn_capable);
    ++passing_.packets;
    passing_.bytes += bytes;
    passing_.marks += mark;
    return {mark ? EnqueueVerdict::kEnqueuedMarked : EnqueueVerdict::kEnqueued, DropReason::kCount};
  }
  // pass_summed() for a packet can_cut() allowed: an admitted packet also
  // pays a shaped port's bucket for its wire bytes.
  EnqueueResult cut_summed(uint16_t queue, uint32_t bytes, bool ecn_capable) {
    const EnqueueResult r = pass_summed(queue, bytes, ecn_capable);
    if (!shaper_.unlimited() && r.verdict != EnqueueVerdict::kDropped) pay_wire(bytes);
    return r;
  }
  // A run of pass_summed() calls at one instant with nothing else at the
  // port between them (real time's cut-through of a received burst):
  // passing charges no buffer and leaves the queue empty, so each call
  // finds the buffer and the ECN rule as the first did. pass_limit() is
  // the largest packet they admit, passes_unmarked() whether ECN marks
  // none of them (and draws no RED coin), and pass_run() counts `packets`
  // of `bytes` in all for `queue`, as that many pass_summed() calls that
  // admitted them unmarked would.
  uint64_t pass_limit() const { return buffer_->admit_limit(0); }
  bool passes_unmarked() const { return ecn_lowest_marked_ > 0; }
  void pass_run(uint16_t queue, uint32_t packets, uint64_t bytes) {
    pass_to(queue);
    passing_.packets += packets;
    passing_.bytes += bytes;
  }
  // The summed passes are `queue`'s from here on: another queue's are
  // published first.
  void pass_to(uint16_t queue) {
    if (queue != passing_.queue) [[unlikely]] {
      pass_publish();
      passing_.queue = queue;
    }
  }
  void pass_publish() {
    if (passing_.packets == 0) return;
    count_passes(passing_.queue, passing_.packets, passing_.bytes, passing_.marks);
    pass_residences(passing_.packets);
    passing_.packets = passing_.bytes = passing_.marks = 0;
  }
  // A run of passes whose queue may change from one packet to the next (a
  // module's choice at the pass), each admitted unmarked as pass_run()'s:
  // after a pass_publish(), pass_each() counts one packet for its queue and
  // moves the scheduler as its own pass_summed(), published at once, would;
  // pass_residences() adds the run's residences (0) once, at its end.
  void pass_each(uint16_t queue, uint32_t bytes) { count_passes(queue, 1, bytes, 0); }
  void pass_residences(uint32_t packets) {
    residence_.add_to_bucket(LatencyHistogram::bucket_of(0), packets);
    residence_.add_totals(packets, 0);
    backlogged_ = false;
  }

  // Control frames: strict priority over data, never paused, not charged to
  // the shared buffer, still paced by the shaper. False (and counted in
  // control_dropped) when the control queue is full.
  bool enqueue_control(uint64_t now_ns, const TmPacket& pkt) {
    if (control_.full()) {
      control_dropped.add(1);
      return false;
    }
    TmPacket p = pkt;
    p.queue = kControlQueue;
    p.enqueue_ns = now_ns;
    control_.push(p);
    return true;
  }

  // Up to `max` packets the shaper lets leave at now_ns: control first, then
  // the scheduler's choice among unpaused data queues. Records the residence
  // time of data packets and releases their buffer. Returns the count.
  unsigned dequeue_burst(uint64_t now_ns, TmPacket* out, unsigned max) {
    const uint64_t overflow_before = shaper_.overflow_ns();
    shaper_.advance(now_ns);
    // Frames the previous call had to leave for lack of tokens or burst room
    // waited through the whole gap: tokens the bucket could not hold are lost
    // transmit time. (Frames held back by a pause do not count.)
    if (backlogged_ && shaper_.overflow_ns() != overflow_before)
      shaper_lost_ns_.add(shaper_.overflow_ns() - overflow_before);
    if (by_flow_) [[unlikely]] {
      dequeue_dropped_count_ = 0;
      dequeue_marks_ = 0;
    }
    const unsigned n = dequeue_eligible(now_ns, out, max);
    const bool queued = !control_.empty() || sched_.backlogged_mask() != 0;
    backlogged_ = queued && (n == max || !shaper_.has_tokens());
    return n;
  }

 private:
  // can_cut() but for the shaper: the port holds nothing (data or
  // control) and queues by class, neither `queue` nor the port is paused,
  // and no pause is due to end at now_ns.
  bool idle_for(uint64_t now_ns, uint16_t queue) const {
    return sched_.backlogged_mask() == 0 && control_.empty() && !by_flow_ &&
           now_ns < next_expiry_ns_ && now_ns >= port_pause_until_ns_ &&
           ((sched_.paused_mask() >> queue) & 1) == 0;
  }
  // `packets` passes of `bytes` in all, `marks` of them marked, counted
  // for `queue`, whose turn the scheduler then takes as after a dequeue.
  void count_passes(uint16_t queue, uint32_t packets, uint64_t bytes, uint16_t marks) {
    QueueStats& st = queues_[queue].stats;
    st.enqueued_packets.add(packets);
    st.enqueued_bytes.add(bytes);
    st.dequeued_packets.add(packets);
    st.dequeued_bytes.add(bytes);
    if (marks != 0) st.ecn_marks.add(marks);
    sched_.passed(queue);
  }
  // A passing frame of `bytes` pays the bucket, as dequeue_data charges it.
  void pay_wire(uint32_t bytes) {
    shaper_.spend_wire(TokenBucketShaper::wire_bytes(bytes, shaper_.overhead_bytes()));
  }

  unsigned dequeue_eligible(uint64_t now_ns, TmPacket* out, unsigned max) {
    unsigned n = 0;
    if (!control_.empty()) [[unlikely]]
      n = dequeue_control(out, max);
    if (n == max || sched_.backlogged_mask() == 0) return n;
    if (now_ns >= next_expiry_ns_) expire_pauses(now_ns);
    if (now_ns < port_pause_until_ns_) return n;
    if (by_flow_) [[unlikely]]  // queue 0 stands for all the flows (a PFC pause holds them)
      return sched_.eligible_mask() != 0 ? dequeue_flows(now_ns, out, n, max) : n;
    if (shaper_.unlimited()) return dequeue_data<false>(now_ns, out, n, max);
    return dequeue_data<true>(now_ns, out, n, max);
  }

  unsigned dequeue_control(TmPacket* out, unsigned max) {
    unsigned n = 0;
    while (n < max && !control_.empty() && shaper_.has_tokens()) {
      TmPacket p = control_.pop();
      shaper_.spend(p.bytes);
      control_sent.add(1);
      control_sent_bytes.add(p.bytes);
      out[n++] = p;
    }
    return n;
  }

  // Data packets into out[n..max) while the shaper has tokens. Each pick of
  // the scheduler is followed by the run of packets it would pick again (DRR:
  // while the head fits the deficit; strict priority: while the queue has
  // packets), so the scheduler, queue depth and queue stats are updated once
  // per run, and the shaper, buffer and residence histogram once per call.
  template <bool kShaped>
  unsigned dequeue_data(uint64_t now_ns, TmPacket* out, unsigned n, unsigned max) {
    const int64_t budget = kShaped ? shaper_.wire_budget() : 0;
    Run run{
        .budget = budget,
        .overhead = shaper_.overhead_bytes(),
        .residence = ResidenceBatch(now_ns),
    };
    TmPacket* const first = out + n;
    TmPacket* dst = first;
    TmPacket* const dst_end = out + max;
    uint64_t released = 0;
    const uint64_t unlimited = sched_.unlimited_mask();
    auto head_bytes = [this](unsigned q) { return queues_[q].ring.front().bytes; };
    while (dst != dst_end && run.budget >= 0) {
      const int picked = sched_.pick(head_bytes);
      if (picked == DrrScheduler::kNone) break;
      const unsigned q = static_cast<unsigned>(picked);
      DataQueue& dq = queues_[q];
      PacketQueue& pq = dq.ring;
      const uint32_t head = pq.head_index();
      const uint32_t tail = pq.tail_index();
      if (tail - head == 1) {  // a run of one, the common case when flows spread over queues
        released += take_last<kShaped>(run, q, head, dst, first);
        ++dst;
        continue;
      }
      const uint32_t want = std::min<uint32_t>(tail - head, static_cast<uint32_t>(dst_end - dst));
      // The ring holds the run in at most two pieces: to its end, then from 0.
      const TmPacket* ring = pq.ring();
      const uint32_t at = head & pq.mask();
      const uint32_t piece = std::min(want, pq.capacity() - at);
      const int64_t deficit = (unlimited >> q) & 1 ? INT64_MAX : sched_.deficit(q);
      run.deficit = deficit;
      TmPacket* const run_first = dst;
      dst = take<kShaped>(run, ring + at, ring + at + piece, dst, first);
      if (dst - run_first == piece && piece != want) {
        dst = take<kShaped>(run, ring, ring + (want - piece), dst, first);
      }
      const uint32_t sent = static_cast<uint32_t>(dst - run_first);
      const uint64_t bytes = static_cast<uint64_t>(deficit - run.deficit);
      pq.pop_run(head + sent, bytes);
      sched_.sent(q, static_cast<uint32_t>(bytes));
      if (head + sent == tail) sched_.set_empty(q);
      QueueStats& st = dq.stats;
      st.dequeued_packets.add(sent);
      st.dequeued_bytes.add(bytes);
      released += bytes;
    }
    if constexpr (kShaped) shaper_.spend_wire(static_cast<uint64_t>(budget - run.budget));
    buffer_->release(released);
    const uint64_t total = static_cast<uint64_t>(dst - first);
    run.residence.publish(residence_, total);
    return n + static_cast<unsigned>(total);
  }

  // dequeue_data for a port that queues by flow, SFQ, FQ or pFabric (out of
  // line: ports that queue by class never call it).
  unsigned dequeue_flows(uint64_t now_ns, TmPacket* out, unsigned n, unsigned max);

  // What dequeue_data keeps in registers across the packets of a burst.
  struct Run {
    int64_t deficit = 0;  // the queue's DRR deficit (strict priority: INT64_MAX)
    int64_t budget;       // shaper wire bytes left (see TokenBucketShaper::wire_budget)
    uint64_t overhead;    // shaper wire overhead per frame
    ResidenceBatch residence;
  };

  // The only packet of queue q to *dst: the scheduler's pick means it fits
  // the deficit, and the loop checked the budget. The queue empties, so it
  // forfeits its deficit (no sent()). Returns its bytes.
  template <bool kShaped>
  uint32_t take_last(Run& run, unsigned q, uint32_t head, TmPacket* dst, const TmPacket* first) {
    auto& dq = queues_[q];
    const TmPacket& p = dq.ring.at(head);
    const uint32_t bytes = p.bytes;
    if constexpr (kShaped)
      run.budget -= static_cast<int64_t>(TokenBucketShaper::wire_bytes(bytes, run.overhead));
    run.residence.add(residence_, p.enqueue_ns, static_cast<uint64_t>(dst - first));
    *dst = p;
    dq.ring.pop_run(head + 1, bytes);
    sched_.set_empty(q);
    dq.stats.dequeued_packets.add(1);
    dq.stats.dequeued_bytes.add(bytes);
    return bytes;
  }

  // Copies packets [src, src_end) to dst while each fits the deficit and the
  // shaper budget is not negative; returns the new dst.
  template <bool kShaped>
  TmPacket* take(Run& run, const TmPacket* src, const TmPacket* src_end, TmPacket* dst,
                 const TmPacket* first) {
    for (; src != src_end; ++src) {
      const uint32_t bytes = src->bytes;
      if (run.deficit < static_cast<int64_t>(bytes)) break;
      if constexpr (kShaped) {
        if (run.budget < 0) break;
        run.budget -= static_cast<int64_t>(TokenBucketShaper::wire_bytes(bytes, run.overhead));
      }
      run.deficit -= bytes;
      run.residence.add(residence_, src->enqueue_ns, static_cast<uint64_t>(dst - first));
      *dst++ = *src;
    }
    return dst;
  }

 public:
  // Earliest time something could leave (shaper, pause expiry), not before
  // now_ns; UINT64_MAX if nothing is queued or everything queued is paused
  // until resumed.
  uint64_t next_event_ns(uint64_t now_ns) const;

  // The earliest instant after now_ns at which a pause (a queue's or the
  // port's) runs out by itself; UINT64_MAX when none will. Exact fabric
  // time asks it for TCD, which must see a queue turn ON when it does.
  uint64_t next_pause_end_ns(uint64_t now_ns) const {
    uint64_t t = port_pause_until_ns_ > now_ns ? port_pause_until_ns_ : UINT64_MAX;
    for (uint64_t m = sched_.paused_mask(); m != 0; m &= m - 1) {
      const uint64_t until = pause_until_ns_[std::countr_zero(m)];
      if (until > now_ns && until < t) t = until;
    }
    return t;
  }

  // A pause lasts until until_ns (UINT64_MAX: until resumed); a new pause
  // replaces the previous end time.
  void pause_queue(uint16_t q, uint64_t until_ns) {
    pause_until_ns_[q] = until_ns;
    sched_.set_paused(q);
    if (until_ns < next_expiry_ns_) next_expiry_ns_ = until_ns;
  }
  void resume_queue(uint16_t q) {
    sched_.clear_paused(q);
    pause_until_ns_[q] = 0;
  }
  // Pauses the data queues only; control still leaves.
  void pause_port(uint64_t until_ns) { port_pause_until_ns_ = until_ns; }
  void resume_port() { port_pause_until_ns_ = 0; }
  bool queue_paused(uint16_t q, uint64_t now_ns) const {
    return ((sched_.paused_mask() >> q) & 1) && now_ns < pause_until_ns_[q];
  }
  bool port_paused(uint64_t now_ns) const { return now_ns < port_pause_until_ns_; }
  // The data queues held paused at now_ns, by their own pause or the
  // port's (bit q), whether or not dequeue_burst has expired them yet.
  uint64_t paused_queues(uint64_t now_ns) const {
    uint64_t m = 0;
    for (uint64_t p = sched_.paused_mask(); p != 0; p &= p - 1) {
      const unsigned q = static_cast<unsigned>(std::countr_zero(p));
      if (now_ns < pause_until_ns_[q]) m |= uint64_t{1} << q;
    }
    if (port_paused(now_ns))
      m |= num_queues_ == 64 ? ~uint64_t{0} : (uint64_t{1} << num_queues_) - 1;
    return m;
  }
  // When queue q, seen paused at since_ns and not at now_ns, stopped being
  // paused: the latest expiry (its own or the port's) in (since_ns, now_ns];
  // now_ns when there is none, i.e. a frame resumed it.
  uint64_t pause_ended_ns(uint16_t q, uint64_t since_ns, uint64_t now_ns) const {
    uint64_t end = 0;
    for (uint64_t t : {pause_until_ns_[q], port_pause_until_ns_}) {
      if (t > since_ns && t <= now_ns) end = std::max(end, t);
    }
    return end != 0 ? end : now_ns;
  }

  // Removes every queued packet (shutdown), control first, calling
  // fn(const TmPacket&) for each and releasing data packets' buffer. Drops are
  // not counted here: the caller reports them (sluice: queued_at_stop).
  template <class F>
  void drain(F&& fn) {
    while (!control_.empty()) fn(static_cast<const TmPacket&>(control_.pop()));
    for (uint32_t q = 0; q < num_queues_; ++q) {
      PacketQueue& pq = queues_[q].ring;
      while (!pq.empty()) {
        TmPacket p = pq.pop();
        buffer_->release(p.bytes);
        fn(static_cast<const TmPacket&>(p));
      }
    }
    if (flowq_) {
      flowq_->drain([&](const TmPacket& p) {
        if (!unlimited_buffer_) buffer_->release(p.bytes);
        fn(p);
      });
    }
    if (pfabric_) pfabric_->drain(fn);
    sched_.reset();
  }

  uint32_t num_queues() const { return num_queues_; }
  // Sums over the queues (for the scraper and reports; not per packet).
  uint64_t queued_bytes() const { return data_queued_bytes() + control_.bytes(); }
  uint64_t queued_packets() const;
  uint64_t data_queued_bytes() const;
  uint64_t queue_bytes(uint16_t q) const { return queues_[q].ring.bytes(); }
  // queue_bytes for reports and the scraper: a port that queues by flow
  // has one data queue, 0, holding all its flows' queues.
  uint64_t depth_bytes(uint16_t q) const {
    if (flowq_) return flowq_->bytes();
    if (pfabric_) return pfabric_->bytes();
    return queues_[q].ring.bytes();
  }
  uint64_t queue_packets(uint16_t q) const { return queues_[q].ring.packets(); }
  const PacketQueue& queue(uint16_t q) const { return queues_[q].ring; }
  const PacketQueue& control_queue() const { return control_; }
  const QueueStats& queue_stats(uint16_t q) const { return queues_[q].stats; }
  const LatencyHistogram& residence() const { return residence_; }
  // Where a pass reads beyond the object's first two lines: the
  // scheduler's masks, and the pass sums with the residence totals (for
  // the emulator's prefetch before an admission, switch/emulator/port_lines.h).
  const void* scheduler_line() const { return &sched_; }
  const void* pass_line() const { return &passing_; }
  // Transmit time lost while frames were waiting, because dequeue_burst was
  // called too late for the bucket to hold the tokens (emulation fidelity).
  uint64_t shaper_lost_ns() const { return shaper_lost_ns_.get(); }
  // Transmit time lost outside the shaper (an unshaped internal link whose
  // FIFO ran dry while frames waited), counted with shaper_lost_ns.
  void add_lost_transmit_ns(uint64_t ns) { shaper_lost_ns_.add(ns); }
  const TokenBucketShaper& shaper() const { return shaper_; }
  const SharedBuffer& buffer() const { return *buffer_; }
  uint64_t ecn_marks() const { return ecn_.marks(); }
  // Sums over the data queues (for the scraper; not per packet).
  uint64_t data_sent_packets() const;
  uint64_t data_sent_bytes() const;

  // Per-port control-queue totals.
  RelaxedCounter control_sent;
  RelaxedCounter control_sent_bytes;
  RelaxedCounter control_dropped;

 private:
  // enqueue()'s refusal: finds and counts the reason (buffer admission
  // first, then ring capacity). Out of line: the fast path stays short.
  EnqueueResult refuse(uint16_t queue, uint32_t bytes);

  // The marker's decision for a packet finding `depth` bytes queued, read
  // from the marker's line only for a queue that may be marked.
  bool should_mark(uint64_t depth, bool ecn_capable) {
    return ecn_capable && depth >= ecn_lowest_marked_ && ecn_.should_mark(depth, true);
  }

  // Ends the pauses due by now_ns and finds the next expiry. Runs only when a
  // pause is due, and visits only the paused queues.
  void expire_pauses(uint64_t now_ns);

  // What every enqueue and dequeue reads comes first, in the object's
  // first five cache lines (the emulator's loop prefetches the first two,
  // the scheduler's and the pass's before an admission:
  // switch/emulator/port_lines.h): these fields, the
  // control queue, the shaper, the ECN marker and the head of the scheduler
  // (a class port's first queues' deficits). The first line, with the
  // control counts above, is full: an enqueue or a pass tests the marker's
  // lowest marked queue there, so only a queue that may be marked reads
  // the marker's line.
  uint32_t num_queues_;
  bool backlogged_ = false;  // frames were left queued by the last dequeue_burst
  bool by_flow_ = false;     // the port queues by flow: flowq_ or pfabric_
  bool unlimited_buffer_ = false;
  uint8_t dequeue_dropped_count_ = 0;  // at most kMaxDequeueDropped
  uint64_t ecn_lowest_marked_;         // ecn_.lowest_marked()
  SharedBuffer* buffer_;
  // A data queue and its stats side by side: one base address per packet,
  // and one line for what each enqueue and dequeue touches (the ring's
  // indices and depth, the packet and byte counts; marks and drops follow).
  struct alignas(64) DataQueue {
    PacketQueue ring;
    QueueStats stats;
  };
  static_assert(sizeof(PacketQueue) + 4 * sizeof(RelaxedCounter) <= 64);
  std::unique_ptr<DataQueue[]> queues_;
  uint64_t next_expiry_ns_ = UINT64_MAX;
  uint64_t port_pause_until_ns_ = 0;
  uint64_t dequeue_marks_ = 0;
  PacketQueue control_;
  TokenBucketShaper shaper_;
  EcnMarker ecn_;
  DrrScheduler sched_;
  // pass_summed()'s sums since the last pass_publish() (a burst at most;
  // pass() publishes each packet). 16 bytes starting a cache line, with the
  // residence histogram's totals and first buckets after them: a pass
  // writes that one line.
  struct Passing {
    uint64_t bytes = 0;
    uint32_t packets = 0;
    uint16_t marks = 0;
    uint16_t queue = 0;
  };
  alignas(64) Passing passing_;
  LatencyHistogram residence_;
  RelaxedCounter shaper_lost_ns_;
  uint64_t pause_until_ns_[kMaxQueues] = {};
  // Queueing by flow, after everything a class port reads: the queues, and
  // what the last dequeue_burst dropped (an array only such a port
  // allocates).
  std::unique_ptr<FlowQueues> flowq_;
  std::unique_ptr<PfabricQueue> pfabric_;
  static constexpr unsigned kMaxDequeueDropped = 64;
  static_assert(kMaxDequeueDropped <= UINT8_MAX);  // dequeue_dropped_count_
  std::unique_ptr<TmPacket[]> dequeue_dropped_;
};

}  // namespace sluice
