#include "lib/bfc/bfc_shard.h"

#include <stdexcept>

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
    : table_(cfg.owned_queues, cfg.flow_table_factor),
      assigner_(assigner_config(cfg)),
      counters_(cfg.switch_facing),
      hop_rtt_ns_(cfg.hop_rtt_ns),
      all_queues_(cfg.queues_per_port >= 64 ? ~uint64_t{0}
                                            : (uint64_t{1} << cfg.queues_per_port) - 1) {
  const size_t ports = cfg.switch_facing.size();
  if (cfg.rate_bps.size() != ports)
    throw std::invalid_argument("bfc shard: one rate per port expected");
  rate_bps_ = std::make_unique<uint64_t[]>(ports);
  for (size_t p = 0; p < ports; ++p) rate_bps_[p] = cfg.rate_bps[p];
  last_th_ = std::make_unique<RelaxedCounter[]>(ports);
  last_active_ = std::make_unique<RelaxedCounter[]>(ports);
}

uint16_t BfcShard::assign(uint16_t egress, uint32_t hash, uint64_t now_ns, BfcTicket* ticket) {
  FlowEntry& e = table_.claim(egress, hash, &ticket->entry);
  return assigner_.assign(egress, hash, e, now_ns);
}

BfcSignal BfcShard::on_enqueued(uint16_t egress, uint16_t q, uint64_t queue_bytes,
                                uint64_t paused_mask, uint64_t now_ns, BfcTicket* ticket) {
  table_.on_enqueue(ticket->entry, now_ns);
  // Th counts the queue the packet joins as active even if it was empty.
  assigner_.on_queue_nonempty(egress, q);
  const uint64_t nonempty = ~assigner_.empty_mask(egress) & all_queues_;
  const uint32_t active = active_queue_count(nonempty, paused_mask);
  const uint64_t th = pause_threshold_bytes(hop_rtt_ns_, rate_bps_[egress], active);
  last_th_[egress].set(th);
  last_active_[egress].set(active);
  const EnqueueDecision d =
      counters_.on_enqueue(ticket->ingress, ticket->upstream_queue, egress, queue_bytes, th);
  ticket->flagged = d.flagged;
  return d.signal;
}

BfcSignal BfcShard::on_departure(uint16_t egress, uint16_t q, bool queue_empty,
                                 const BfcTicket& ticket, uint64_t now_ns) {
  table_.on_departure(ticket.entry, now_ns);
  if (queue_empty) assigner_.on_queue_empty(egress, q);
  if (!ticket.flagged) return BfcSignal::kNone;
  return counters_.on_flagged_departure(ticket.ingress, ticket.upstream_queue);
}

}  // namespace sluice
