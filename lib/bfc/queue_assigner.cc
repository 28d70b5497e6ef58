#include "lib/bfc/queue_assigner.h"

#include <bit>
#include <stdexcept>

namespace sluice {

QueueAssigner::QueueAssigner(const QueueAssignerConfig& cfg)
    : mode_(cfg.mode), queues_(cfg.queues_per_port), sticky_ns_(cfg.sticky_ns), rng_(cfg.rng_seed) {
  if (cfg.num_ports == 0) throw std::invalid_argument("queue assigner: no ports");
  if (queues_ == 0 || queues_ > 64)
    throw std::invalid_argument("queue assigner: queues per port must be 1..64");
  all_mask_ = queues_ == 64 ? ~uint64_t{0} : (uint64_t{1} << queues_) - 1;
  empty_ = std::make_unique<uint64_t[]>(cfg.num_ports);
  next_start_ = std::make_unique<uint8_t[]>(cfg.num_ports);
  for (uint32_t p = 0; p < cfg.num_ports; ++p) empty_[p] = all_mask_;
}

uint16_t QueueAssigner::assign(uint16_t egress, uint32_t hash, FlowEntry& e, uint64_t now_ns) {
  uint16_t q = 0;
  switch (mode_) {
    case BfcAssignment::kSingle:
      q = 0;
      break;
    case BfcAssignment::kStochastic:
      q = static_cast<uint16_t>(hash % queues_);
      break;
    case BfcAssignment::kDynamic:
      q = keeps_queue(e, now_ns) ? e.queue : pick_dynamic(egress);
      break;
  }
  e.queue = q;
  e.used = true;
  return q;
}

// Sticky: packets still here (moving would reorder them), or active within
// sticky_ns (upstream may still hold packets sent under the old assignment).
bool QueueAssigner::keeps_queue(const FlowEntry& e, uint64_t now_ns) const {
  if (!e.used || e.queue >= queues_) return false;
  return e.packets > 0 || now_ns < e.last_active_ns + sticky_ns_;
}

uint16_t QueueAssigner::pick_dynamic(uint16_t egress) {
  const uint64_t empty = empty_[egress] & all_mask_;
  if (empty == 0) {
    queue_collisions_.add(1);
    return static_cast<uint16_t>((static_cast<uint64_t>(rng_.next32()) * queues_) >> 32);
  }
  // First empty queue at or after the start, wrapping around.
  const unsigned start = next_start_[egress];
  const uint64_t at_or_after = empty & (~uint64_t{0} << start);
  const unsigned q = static_cast<unsigned>(std::countr_zero(at_or_after ? at_or_after : empty));
  next_start_[egress] = static_cast<uint8_t>(q + 1 == queues_ ? 0 : q + 1);
  return static_cast<uint16_t>(q);
}

}  // namespace sluice
