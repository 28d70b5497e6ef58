#include "switch/mechanisms/flowtune/flowtune_edge.h"

#include "lib/mechanisms/flowtune/flowtune_outbox.h"

namespace sluice {

FlowtuneEdge::FlowtuneEdge(const FlowtuneConfig& c)
    : cfg(c),
      flowlets(c.flows, c.idle_gap_ns),
      pacer(c.flows, {c.max_held_packets, c.ecn_threshold_bytes}),
      held(c.flows, c.max_held_packets),
      host_flows(c.pace_at_host ? c.flows : 0) {}

bool FlowtuneEdge::open_udp(const std::string& name, std::string* error) {
  udp_ = std::make_unique<FlowtuneUdpPath>(cfg);
  return udp_->open(name, error);
}

void FlowtuneEdge::attach_fabric(flowtune::FabricAllocator* allocator, uint32_t number) {
  fabric_ = allocator;
  number_ = number;
}

// What one instant reports would leave as datagrams: STARTs, up to
// FlowtuneOutbox::kMaxStarts a datagram, and ENDs, up to kMaxEnds.
void FlowtuneEdge::count_message(bool start, uint64_t now_ns) {
  if (now_ns != batch_ns_) {
    batch_ns_ = now_ns;
    batch_starts_ = batch_ends_ = 0;
  }
  uint32_t& n = start ? batch_starts_ : batch_ends_;
  if (n % (start ? FlowtuneOutbox::kMaxStarts : FlowtuneOutbox::kMaxEnds) == 0) messages_sent.add();
  ++n;
}

void FlowtuneEdge::report_start(uint32_t flow_id, uint32_t src_ip, uint32_t dst_ip,
                                uint64_t now_ns, std::span<const flowtune::LinkId> via) {
  starts_reported.add();
  bool sent;
  if (fabric_ != nullptr) {
    sent = fabric_->send_start(
        number_, {flow_id, src_ip, dst_ip, static_cast<uint16_t>(cfg.weight)}, now_ns, via);
    if (sent) count_message(true, now_ns);
  } else {
    sent = udp_->post_start(flow_id, src_ip, dst_ip);
  }
  if (!sent) events_lost.add();
}

void FlowtuneEdge::report_end(uint32_t flow_id, uint64_t now_ns) {
  ends_reported.add();
  bool sent;
  if (fabric_ != nullptr) {
    sent = fabric_->send_end(number_, flow_id, now_ns);
    if (sent) count_message(false, now_ns);
  } else {
    sent = udp_->post_end(flow_id);
  }
  if (!sent) events_lost.add();
}

void FlowtuneEdge::apply_rate(uint32_t flow_id, uint32_t kbps, uint64_t now_ns) {
  if (pacer.set_rate(flow_id, kbps, now_ns, cfg.lease_ns)) rate_updates.add();
}

void FlowtuneEdge::apply_rates(uint64_t now_ns) {
  if (udp_ == nullptr) return;
  udp_->take_rates([&](uint32_t flow_id, uint32_t kbps) { apply_rate(flow_id, kbps, now_ns); });
}

}  // namespace sluice
