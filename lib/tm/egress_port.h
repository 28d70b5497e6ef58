#pragma once
// The traffic manager of one egress port: a strict-priority control queue,
// N data queues scheduled by DRR (or strict priority), admission into a
// shared buffer with dynamic thresholds, ECN marking at enqueue, per-queue and
// per-port pauses with expiry, a token-bucket shaper at the port's rate, and
// residence-time measurement. docs/traffic-manager.md describes the model.
//
// Single writer: the lcore that owns the port. Counters are RelaxedCounters
// so the metrics scraper may read them. Time is always an argument.

#include <cassert>
#include <cstdint>
#include <memory>

#include "lib/common/drop_reason.h"
#include "lib/common/relaxed_counter.h"
#include "lib/config/config.h"
#include "lib/tm/drr_scheduler.h"
#include "lib/tm/ecn_marker.h"
#include "lib/tm/latency_histogram.h"
#include "lib/tm/packet_queue.h"
#include "lib/tm/shared_buffer.h"
#include "lib/tm/tm_packet.h"
#include "lib/tm/token_bucket_shaper.h"

namespace sluice {

struct EgressPortConfig {
  uint32_t num_queues = 32;        // 1..64
  uint32_t queue_capacity = 4096;  // packets per data queue, rounded up to a power of two
  uint32_t control_capacity = 256;
  SchedulerKind scheduler = SchedulerKind::kDrr;
  uint32_t drr_quantum_bytes = 1600;
  uint64_t rate_bps = 0;              // 0 = unshaped
  uint64_t burst_bytes = 0;           // 0 = default: max(16 KiB, rate x 10 us)
  uint32_t wire_overhead_bytes = 24;  // preamble 8 + FCS 4 + inter-frame gap 12
  EcnConfig ecn;
  uint64_t rng_seed = 1;
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

class EgressPort {
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
    assert(queue < num_queues_);
    PacketQueue& pq = queues_[queue];
    QueueStats& st = stats_[queue];
    DropReason why;
    if (!buffer_->admits(pq.bytes(), pkt.bytes, &why)) return drop(st, why);
    if (pq.full()) return drop(st, DropReason::kQueueFull);
    bool mark = ecn_.should_mark(pq.bytes(), ecn_capable);
    TmPacket p = pkt;
    p.queue = queue;
    p.enqueue_ns = now_ns;
    pq.push(p);
    buffer_->charge(p.bytes);
    sched_.set_backlogged(queue);
    data_bytes_.add(p.bytes);
    data_packets_.add(1);
    st.enqueued_packets.add(1);
    st.enqueued_bytes.add(p.bytes);
    if (mark) st.ecn_marks.add(1);
    return {mark ? EnqueueVerdict::kEnqueuedMarked : EnqueueVerdict::kEnqueued, DropReason::kCount};
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
    const unsigned n = dequeue_eligible(now_ns, out, max);
    backlogged_ = queued_packets() != 0 && (n == max || !shaper_.has_tokens());
    return n;
  }

 private:
  unsigned dequeue_eligible(uint64_t now_ns, TmPacket* out, unsigned max) {
    unsigned n = 0;
    while (n < max && !control_.empty() && shaper_.has_tokens()) {
      TmPacket p = control_.pop();
      shaper_.spend(p.bytes);
      control_sent.add(1);
      control_sent_bytes.add(p.bytes);
      out[n++] = p;
    }
    if (n == max || data_packets_.get() == 0) return n;
    if (now_ns >= next_expiry_ns_) expire_pauses(now_ns);
    if (now_ns < port_pause_until_ns_) return n;
    auto head_bytes = [this](unsigned q) { return queues_[q].front().bytes; };
    while (n < max && shaper_.has_tokens()) {
      int q = sched_.pick(head_bytes);
      if (q == DrrScheduler::kNone) break;
      out[n++] = dequeue_from(static_cast<unsigned>(q), now_ns);
    }
    return n;
  }

 public:

  // Earliest time something could leave (shaper, pause expiry), not before
  // now_ns; UINT64_MAX if nothing is queued or everything queued is paused
  // until resumed.
  uint64_t next_event_ns(uint64_t now_ns) const;

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

  // Removes every queued packet (shutdown), control first, calling
  // fn(const TmPacket&) for each and releasing data packets' buffer. Drops are
  // not counted here: the caller reports them (sluice: queued_at_stop).
  template <class F>
  void drain(F&& fn) {
    while (!control_.empty()) fn(static_cast<const TmPacket&>(control_.pop()));
    for (uint32_t q = 0; q < num_queues_; ++q) {
      PacketQueue& pq = queues_[q];
      while (!pq.empty()) {
        TmPacket p = pq.pop();
        buffer_->release(p.bytes);
        data_bytes_.sub(p.bytes);
        data_packets_.sub(1);
        fn(static_cast<const TmPacket&>(p));
      }
    }
    sched_.reset();
  }

  uint32_t num_queues() const { return num_queues_; }
  uint64_t queued_bytes() const { return data_bytes_.get() + control_.bytes(); }
  uint64_t queued_packets() const { return data_packets_.get() + control_.packets(); }
  uint64_t data_queued_bytes() const { return data_bytes_.get(); }
  uint64_t queue_bytes(uint16_t q) const { return queues_[q].bytes(); }
  uint64_t queue_packets(uint16_t q) const { return queues_[q].packets(); }
  const PacketQueue& queue(uint16_t q) const { return queues_[q]; }
  const PacketQueue& control_queue() const { return control_; }
  const QueueStats& queue_stats(uint16_t q) const { return stats_[q]; }
  const LatencyHistogram& residence() const { return residence_; }
  // Transmit time lost while frames were waiting, because dequeue_burst was
  // called too late for the bucket to hold the tokens (emulation fidelity).
  uint64_t shaper_lost_ns() const { return shaper_lost_ns_.get(); }
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
  static EnqueueResult drop(QueueStats& st, DropReason why) {
    st.drops[static_cast<unsigned>(why)].add(1);
    return {EnqueueVerdict::kDropped, why};
  }

  TmPacket dequeue_from(unsigned q, uint64_t now_ns) {
    PacketQueue& pq = queues_[q];
    TmPacket p = pq.pop();
    sched_.sent(q, p.bytes);
    if (pq.empty()) sched_.set_empty(q);
    buffer_->release(p.bytes);
    shaper_.spend(p.bytes);
    data_bytes_.sub(p.bytes);
    data_packets_.sub(1);
    QueueStats& st = stats_[q];
    st.dequeued_packets.add(1);
    st.dequeued_bytes.add(p.bytes);
    residence_.record(now_ns - p.enqueue_ns);
    return p;
  }

  // Ends the pauses due by now_ns and finds the next expiry. Runs only when a
  // pause is due, and visits only the paused queues.
  void expire_pauses(uint64_t now_ns);

  uint32_t num_queues_;
  SharedBuffer* buffer_;
  std::unique_ptr<PacketQueue[]> queues_;
  std::unique_ptr<QueueStats[]> stats_;
  PacketQueue control_;
  DrrScheduler sched_;
  TokenBucketShaper shaper_;
  EcnMarker ecn_;
  LatencyHistogram residence_;
  RelaxedCounter data_bytes_;
  RelaxedCounter data_packets_;
  RelaxedCounter shaper_lost_ns_;
  bool backlogged_ = false;  // frames were left queued by the last dequeue_burst
  uint64_t next_expiry_ns_ = UINT64_MAX;
  uint64_t port_pause_until_ns_ = 0;
  uint64_t pause_until_ns_[kMaxQueues] = {};
};

}  // namespace sluice
