#pragma once
// BFC pause counters, one per (ingress port, upstream queue): how many
// flagged packets from that upstream queue are in this switch. A packet is
// flagged when it is enqueued into a queue already longer than Th; the
// counter's 0 -> 1 asks for BFC_PAUSE of the upstream queue out of the
// ingress port, and 1 -> 0 (the last flagged packet left) for BFC_RESUME.
// docs/mechanisms/bfc.md ("Pause counters").
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

#include "lib/common/relaxed_counter.h"

namespace sluice {

inline constexpr uint16_t kNoUpstreamQueue = 0xFFFF;
inline constexpr uint32_t kMaxUpstreamQueues = 64;

enum class BfcSignal : uint8_t { kNone, kPause, kResume };

struct EnqueueDecision {
  bool flagged = false;                 // keep with the packet; report on departure
  BfcSignal signal = BfcSignal::kNone;  // kPause: send BFC_PAUSE(upstream queue) out of ingress
};

class PauseCounters {
 public:
  // One entry per port: is it switch-facing. Throws std::invalid_argument
  // for no ports.
  explicit PauseCounters(std::span<const bool> switch_facing);

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
  // Bit q set = upstream queue q of the ingress port is held paused (BFC_BITMAP body).
  // (The scraper may read it while the owner writes.)
  uint64_t paused_mask(uint16_t ingress) const { return paused_[ingress].get(); }
  uint32_t num_ports() const { return num_ports_; }

  RelaxedCounter pauses_requested;
  RelaxedCounter resumes_requested;
  RelaxedCounter paused_upstream_queues;  // gauge

 private:
  size_t slot(uint16_t ingress, uint16_t q) const {
    return static_cast<size_t>(ingress) * kMaxUpstreamQueues + q;
  }

  uint32_t num_ports_;
  std::unique_ptr<uint32_t[]> counts_;
  std::unique_ptr<RelaxedCounter[]> paused_;
  std::unique_ptr<uint8_t[]> switch_facing_;
  std::unique_ptr<uint8_t[]> elided_;
};

}  // namespace sluice
