#include "lib/mechanisms/flowtune/fabric_allocator.h"

#include <algorithm>

namespace sluice::flowtune {
namespace {

AllocatorConfig core_config(const FabricAllocatorConfig& cfg) {
  AllocatorConfig c = cfg.core;
  c.max_senders = cfg.edges;
  return c;
}

}  // namespace

FabricAllocator::FabricAllocator(const FabricAllocatorConfig& cfg)
    : core_(core_config(cfg), counters_.core),
      to_core_(cfg.control_delay_ns, cfg.news_in_flight),
      to_edges_(cfg.control_delay_ns, cfg.rates_in_flight),
      per_msg_(flowtune_entries_per_payload(FlowtuneType::kRateUpdate, kFlowtuneMtuPayload)),
      pass_entries_(cfg.edges, 0) {
  pass_edges_.reserve(cfg.edges);
  // Edge e is the core's sender e.
  for (uint32_t e = 0; e < cfg.edges; ++e) core_.add_sender(e);
}

bool FabricAllocator::send_start(uint32_t edge, const FlowletStart& s, uint64_t now_ns,
                                 std::span<const LinkId> via) {
  News n{edge, true, 0, s, {}};
  n.via_size = static_cast<uint8_t>(std::min<size_t>(via.size(), kMaxVia + 1));
  std::copy_n(via.begin(), std::min<size_t>(via.size(), kMaxVia), n.via.begin());
  if (to_core_.send(n, now_ns)) return true;
  counters_.news_lost.add();
  return false;
}

bool FabricAllocator::send_end(uint32_t edge, uint32_t flow_id, uint64_t now_ns) {
  if (to_core_.send(News{edge, false, 0, FlowletStart{flow_id, 0, 0, 0}, {}}, now_ns)) return true;
  counters_.news_lost.add();
  return false;
}

void FabricAllocator::take(const News& n) {
  if (n.start) {
    uint32_t sender;
    // A path longer than kMaxVia keeps its length, so the core refuses it.
    static const std::array<LinkId, kMaxVia + 1> kTooLong = {};
    const std::span<const LinkId> via =
        n.via_size <= kMaxVia ? std::span<const LinkId>(n.via.data(), n.via_size)
                              : std::span<const LinkId>(kTooLong);
    core_.flowlet_start(n.edge, n.entry, &sender, via);
  } else {
    core_.flowlet_end(n.edge, n.entry.flow_id);
  }
}

void FabricAllocator::send_rates(std::span<const AllocatorUpdate> updates, uint64_t now_ns) {
  for (const AllocatorUpdate& u : updates) {
    if (!to_edges_.send(Rate{u.sender, u.flow_id, u.rate_kbps}, now_ns)) {
      counters_.rates_lost.add();
      continue;
    }
    if (pass_entries_[u.sender]++ == 0) pass_edges_.push_back(u.sender);
  }
}

// What this pass sent each edge, as sluice-allocator would send it: one
// datagram per per_msg_ entries.
void FabricAllocator::count_messages() {
  for (uint32_t e : pass_edges_) {
    const uint32_t n = pass_entries_[e];
    const uint32_t messages = (n + per_msg_ - 1) / per_msg_;
    counters_.update_messages.add(messages);
    counters_.update_bytes.add(uint64_t{messages} * (kFlowtuneHeaderLen + kFlowtuneIpUdpHeaderLen) +
                               uint64_t{n} * kRateUpdateEntryLen);
    pass_entries_[e] = 0;
  }
  pass_edges_.clear();
}

uint64_t FabricAllocator::next_due_ns() const {
  return std::min({to_core_.next_arrival_ns(), to_edges_.next_arrival_ns(), core_.next_due_ns()});
}

}  // namespace sluice::flowtune
