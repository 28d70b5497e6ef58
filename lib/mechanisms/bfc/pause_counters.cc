#include "lib/mechanisms/bfc/pause_counters.h"

#include <cassert>
#include <stdexcept>

namespace sluice {

PauseCounters::PauseCounters(std::span<const bool> switch_facing,
                             std::span<const uint16_t> upstream_queues)
    : num_ports_(static_cast<uint32_t>(switch_facing.size())) {
  const uint32_t num_ports = num_ports_;
  if (num_ports == 0 || num_ports > UINT16_MAX)
    throw std::invalid_argument("pause counters: no ports");
  if (!upstream_queues.empty() && upstream_queues.size() != num_ports)
    throw std::invalid_argument("pause counters: an upstream queue count per port");
  first_ = std::make_unique<size_t[]>(num_ports);
  paused_ = std::make_unique<QueueSet[]>(num_ports);
  paused_count_ = std::make_unique<RelaxedCounter[]>(num_ports);
  size_t total = 0;
  for (uint32_t p = 0; p < num_ports; ++p) {
    const uint32_t n = upstream_queues.empty() ? kMaxUpstreamQueues : upstream_queues[p];
    if (n < 1 || n > QueueSet::kMaxSize)
      throw std::invalid_argument("pause counters: upstream queues out of range");
    first_[p] = total;
    paused_[p] = QueueSet(n);
    total += n;
  }
  counts_ = std::make_unique<uint32_t[]>(total);
  switch_facing_ = std::make_unique<uint8_t[]>(num_ports);
  elided_ = std::make_unique<uint8_t[]>(static_cast<size_t>(num_ports) * num_ports);
  for (uint32_t p = 0; p < num_ports; ++p) switch_facing_[p] = switch_facing[p] ? 1 : 0;
}

void PauseCounters::elide_pair(uint16_t ingress, uint16_t egress) {
  if (ingress >= num_ports_ || egress >= num_ports_)
    throw std::invalid_argument("pause counters: elided pair names an unknown port");
  elided_[static_cast<size_t>(ingress) * num_ports_ + egress] = 1;
}

EnqueueDecision PauseCounters::on_enqueue(uint16_t ingress, uint16_t upstream_queue,
                                          uint16_t egress, uint64_t queue_bytes,
                                          uint64_t th_bytes) {
  if (queue_bytes <= th_bytes) return {};
  if (upstream_queue >= paused_[ingress].size() || !switch_facing_[ingress]) return {};
  if (elided(ingress, egress)) return {};
  if (counts_[slot(ingress, upstream_queue)]++ != 0) return {true, BfcSignal::kNone};
  paused_[ingress].set(upstream_queue);
  paused_count_[ingress].add(1);
  pauses_requested.add(1);
  paused_upstream_queues.add(1);
  return {true, BfcSignal::kPause};
}

BfcSignal PauseCounters::on_flagged_departure(uint16_t ingress, uint16_t upstream_queue) {
  uint32_t& c = counts_[slot(ingress, upstream_queue)];
  assert(c > 0);
  if (c == 0) return BfcSignal::kNone;  // a caller bug; never wrap to 2^32-1
  if (--c != 0) return BfcSignal::kNone;
  paused_[ingress].reset(upstream_queue);
  paused_count_[ingress].sub(1);
  resumes_requested.add(1);
  paused_upstream_queues.sub(1);
  return BfcSignal::kResume;
}

}  // namespace sluice
