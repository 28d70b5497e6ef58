#include "lib/mechanisms/bfc/bfc_shard.h"

#include <stdexcept>

#include "lib/mechanisms/bfc/hop_rtt.h"

namespace sluice {
namespace {

QueueAssignerConfig assigner_config(const BfcShardConfig& cfg) {
  QueueAssignerConfig a;
  a.mode = cfg.mode;
  a.num_ports = static_cast<uint32_t>(cfg.switch_facing.size());
  a.queues_per_port = cfg.queues_per_port;
  a.sticky_ns = cfg.sticky_ns;
  a.rng_seed = cfg.rng_seed;
  return a;
}

}  // namespace

BfcShard::BfcShard(const BfcShardConfig& cfg)
    : table_(cfg.egress_ports, cfg.queues_per_port, cfg.flow_table_factor),
      assigner_(assigner_config(cfg)),
      counters_(cfg.switch_facing, cfg.upstream_queues),
      hop_rtt_ns_(cfg.hop_rtt_ns),
      th_ns_(bfc_th_time_ns(cfg.th_ns, cfg.hop_rtt_ns)),
      all_queues_(cfg.queues_per_port >= 64 ? ~uint64_t{0}
                                            : (uint64_t{1} << cfg.queues_per_port) - 1) {
  const size_t ports = cfg.switch_facing.size();
  if (cfg.rate_bps.size() != ports || cfg.egress_ports.size() != ports)
    throw std::invalid_argument("bfc shard: one rate and one egress flag per port expected");
  th_by_active_ = std::make_unique<uint64_t[]>(ports * kThSlots);
  for (size_t p = 0; p < ports; ++p) {
    for (uint32_t n = 0; n < kThSlots; ++n)
      th_by_active_[p * kThSlots + n] = pause_threshold_bytes(th_ns_, cfg.rate_bps[p], n);
  }
  last_ = std::make_unique<Gauges[]>(ports);
}

}  // namespace sluice
