#pragma once
// BFC pause counters, one per (ingress port, upstream queue): how many
// flagged packets from that upstream queue are in this switch. A packet is
// flagged when it is enqueued into a queue already longer than Th; the
// counter's 0 -> 1 asks for BFC_PAUSE of the upstream queue out of the
// ingress port, and 1 -> 0 (the last flagged packet left) for BFC_RESUME.
// docs/mechanisms/bfc.md ("Pause counters").
//
// An ingress port's upstream has as many queues as it says: a switch's
// port up to 64, a BFC host NIC up to 4096 (a queue per flow); the counters
// and paused sets are sized by them.
//
// Never counted: packets from ingress ports whose peer cannot be paused (not
// `switch_facing`: a host without a BFC NIC) or without an
// upstream queue (kNoUpstreamQueue), and configured (ingress, egress) pairs
// (deadlock avoidance). The caller does the I/O: it keeps the flag with the
// packet and reports its departure (sent or dropped after enqueue).
// Single writer; no allocation after construction.

#include <cstdint>
#include <memory>
#include <span>

#include "lib/common/queue_set.h"
#include "lib/common/relaxed_counter.h"

namespace sluice {

inline constexpr uint16_t kNoUpstreamQueue = 0xFFFF;
inline constexpr uint32_t kMaxUpstreamQueues = 64;  // a switch upstream's (EgressPort's)

// The upstream queues a switch counts toward a BFC NIC of `nic_queues`: a
// switch's 64, or the NIC's when it has more (up to 4096, a queue per
// flow), so that every bitmap describes at least 64 queues, as toward a
// switch.
inline uint32_t bfc_nic_upstream_queues(uint32_t nic_queues) {
  return nic_queues > kMaxUpstreamQueues ? nic_queues : kMaxUpstreamQueues;
}

enum class BfcSignal : uint8_t { kNone, kPause, kResume };

struct EnqueueDecision {
  bool flagged = false;                 // keep with the packet; report on departure
  BfcSignal signal = BfcSignal::kNone;  // kPause: send BFC_PAUSE(upstream queue) out of ingress
};

class PauseCounters {
 public:
  // One entry per port: is it switch-facing, and (empty: kMaxUpstreamQueues
  // each) how many queues its upstream has, 1..QueueSet::kMaxSize. Throws
  // std::invalid_argument for no ports or a count out of range.
  explicit PauseCounters(std::span<const bool> switch_facing,
                         std::span<const uint16_t> upstream_queues = {});

  // (ingress, egress) never generates backpressure.
  void elide_pair(uint16_t ingress, uint16_t egress);
  bool elided(uint16_t ingress, uint16_t egress) const {
    return elided_[static_cast<size_t>(ingress) * num_ports_ + egress] != 0;
  }

  // A packet was enqueued into a queue that held queue_bytes before it.
  EnqueueDecision on_enqueue(uint16_t ingress, uint16_t upstream_queue, uint16_t egress,
                             uint64_t queue_bytes, uint64_t th_bytes);
  // A flagged packet left the switch; kResume: send BFC_RESUME(upstream queue).
  BfcSignal on_flagged_departure(uint16_t ingress, uint16_t upstream_queue);

  uint32_t counter(uint16_t ingress, uint16_t upstream_queue) const {
    return counts_[slot(ingress, upstream_queue)];
  }
  // The upstream queues of the ingress port held paused (BFC_BITMAP body).
  const QueueSet& paused(uint16_t ingress) const { return paused_[ingress]; }
  uint32_t upstream_queues(uint16_t ingress) const { return paused_[ingress].size(); }
  // How many; the scraper may read it while the owner writes.
  uint64_t paused_count(uint16_t ingress) const { return paused_count_[ingress].get(); }
  uint32_t num_ports() const { return num_ports_; }

  RelaxedCounter pauses_requested;
  RelaxedCounter resumes_requested;
  RelaxedCounter paused_upstream_queues;  // gauge

 private:
  size_t slot(uint16_t ingress, uint16_t q) const { return first_[ingress] + q; }

  uint32_t num_ports_;
  std::unique_ptr<size_t[]> first_;  // by port: its first counter
  std::unique_ptr<uint32_t[]> counts_;
  std::unique_ptr<QueueSet[]> paused_;
  std::unique_ptr<RelaxedCounter[]> paused_count_;
  std::unique_ptr<uint8_t[]> switch_facing_;
  std::unique_ptr<uint8_t[]> elided_;
};

}  // namespace sluice
