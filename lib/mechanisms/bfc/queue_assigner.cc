#include "lib/mechanisms/bfc/queue_assigner.h"

#include <stdexcept>

namespace sluice {

QueueAssigner::QueueAssigner(const QueueAssignerConfig& cfg)
    : mode_(cfg.mode),
      queues_(cfg.queues_per_port),
      sticky_ns_(cfg.sticky_ns),
      rng_(cfg.rng_seed),
      next_random_(rng_.next32()) {
  if (cfg.num_ports == 0) throw std::invalid_argument("queue assigner: no ports");
  if (queues_ == 0 || queues_ > 64)
    throw std::invalid_argument("queue assigner: queues per port must be 1..64");
  all_mask_ = queues_ == 64 ? ~uint64_t{0} : (uint64_t{1} << queues_) - 1;
  ports_ = std::make_unique<PortState[]>(cfg.num_ports);
  for (uint32_t p = 0; p < cfg.num_ports; ++p) ports_[p].empty = all_mask_;
}

}  // namespace sluice
