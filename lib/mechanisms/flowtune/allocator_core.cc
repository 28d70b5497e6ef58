#include "lib/mechanisms/flowtune/allocator_core.h"

#include <algorithm>
#include <cmath>

namespace sluice::flowtune {

AllocatorCore::AllocatorCore(const AllocatorConfig& cfg, AllocatorCounters& counters)
    : cfg_(cfg),
      counters_(counters),
      alloc_(NedConfig{cfg.max_flows, 2 * cfg.max_hosts + cfg.max_fabric_links, kDefaultGamma,
                       cfg.threshold}),
      flows_(cfg.max_flows),
      hosts_(cfg.max_hosts),
      senders_(cfg.max_senders) {
  host_links_.reserve(2 * size_t{cfg.max_hosts});
  fabric_link_.assign(2 * size_t{cfg.max_hosts} + cfg.max_fabric_links, false);
  meta_.resize(cfg.max_flows);
  notices_.resize(std::max<uint32_t>(cfg.max_flows, 1));
  out_.resize(std::max<uint32_t>(cfg.max_flows, 1));
}

uint32_t AllocatorCore::to_kbps(double norm) const {
  const double kbps = std::round(norm * double(cfg_.host_rate_bps) / 1000.0);
  if (!(kbps > 0)) return 0;
  return kbps >= double(UINT32_MAX) ? UINT32_MAX : uint32_t(kbps);
}

void AllocatorCore::set_gauges() {
  counters_.flows.set(alloc_.flow_count());
  counters_.hosts.set(hosts_.size());
  counters_.links.set(alloc_.link_count());
}

uint32_t AllocatorCore::host(uint32_t ip) {
  const uint32_t known = hosts_.find(ip);
  if (known != KeyIndex::kAbsent) return known;
  if (hosts_.size() >= cfg_.max_hosts) return KeyIndex::kAbsent;
  // Capacities are in units of the host rate: every host link is 1.
  const LinkId up = alloc_.add_link(1.0);
  const LinkId down = alloc_.add_link(1.0);
  if (up == kInvalidLink || down == kInvalidLink) return KeyIndex::kAbsent;
  const uint32_t h = hosts_.size();
  hosts_.insert(ip, h);
  host_links_.push_back(up);
  host_links_.push_back(down);
  return h;
}

LinkId AllocatorCore::add_fabric_link(double capacity) {
  const LinkId l = alloc_.add_link(capacity);
  if (l != kInvalidLink) fabric_link_[l] = true;
  set_gauges();
  return l;
}

uint32_t AllocatorCore::add_sender(uint64_t sender_key) {
  const uint32_t known = senders_.find(sender_key);
  if (known != KeyIndex::kAbsent) return known;
  const uint32_t who = senders_.size();
  return senders_.insert(sender_key, who) ? who : kNoSender;
}

StartOutcome AllocatorCore::flowlet_start(uint64_t sender_key, const FlowletStart& s,
                                          uint32_t* sender, std::span<const LinkId> via) {
  uint32_t who = senders_.find(sender_key);
  *sender = who == KeyIndex::kAbsent ? kNoSender : who;
  if (who != KeyIndex::kAbsent && flows_.find(flow_key(who, s.flow_id)) != KeyIndex::kAbsent) {
    counters_.start_duplicate.add();
    return StartOutcome::kDuplicate;
  }
  bool via_ok = via.size() + 2 <= kMaxPathLinks;
  for (LinkId l : via) via_ok = via_ok && l < fabric_link_.size() && fabric_link_[l];
  const uint32_t hs = via_ok ? host(s.src_ip) : KeyIndex::kAbsent;
  const uint32_t hd = hs == KeyIndex::kAbsent ? KeyIndex::kAbsent : host(s.dst_ip);
  set_gauges();
  if (hd == KeyIndex::kAbsent) {
    counters_.start_refused.add();
    return StartOutcome::kRefused;
  }
  if (who == KeyIndex::kAbsent) {
    who = senders_.size();
    if (!senders_.insert(sender_key, who)) {
      counters_.start_refused.add();
      return StartOutcome::kRefused;
    }
    *sender = who;
  }
  FlowPath path;
  path.push(host_links_[2 * hs]);
  for (LinkId l : via) path.push(l);
  path.push(host_links_[2 * hd + 1]);
  const FlowId f = alloc_.add_flow(double(s.weight), path.view());
  if (f == kInvalidFlow || !flows_.insert(flow_key(who, s.flow_id), f)) {
    if (f != kInvalidFlow) alloc_.remove_flow(f);
    counters_.start_refused.add();
    return StartOutcome::kRefused;
  }
  meta_[f] = FlowMeta{who, s.flow_id, 0, false, true};
  flow_slots_ = std::max(flow_slots_, f + 1);
  counters_.starts.add();
  set_gauges();
  return StartOutcome::kAdded;
}

bool AllocatorCore::flowlet_end(uint64_t sender_key, uint32_t flow_id) {
  const uint32_t who = senders_.find(sender_key);
  const uint32_t f =
      who == KeyIndex::kAbsent ? KeyIndex::kAbsent : flows_.find(flow_key(who, flow_id));
  if (f == KeyIndex::kAbsent) {
    counters_.end_unknown.add();
    return false;
  }
  alloc_.remove_flow(f);
  flows_.erase(flow_key(who, flow_id));
  meta_[f].live = false;
  if (alloc_.flow_count() == 0) restart_ = true;
  counters_.ends.add();
  set_gauges();
  return true;
}

void AllocatorCore::emit(FlowId f, double norm, uint64_t now_ns, uint32_t n) {
  FlowMeta& m = meta_[f];
  out_[n] = AllocatorUpdate{m.sender, m.flow_id, to_kbps(norm)};
  m.last_send_ns = now_ns;
  m.sent = true;
}

AllocatorCore::Iteration AllocatorCore::iterate(uint64_t now_ns) {
  const bool judged = !restart_ && cfg_.iteration_ns != 0;
  const uint64_t late = judged && now_ns > next_iter_ns_ ? now_ns - next_iter_ns_ : 0;
  alloc_.iterate();
  alloc_.normalise(NormMode::kFNorm);
  const uint32_t n = alloc_.collect_notices(notices_);
  for (uint32_t i = 0; i < n; ++i) emit(notices_[i].flow, notices_[i].rate, now_ns, i);
  counters_.iterations.add();
  counters_.updates.add(n);
  // A period after this one; after an idle spell, or late, a period from
  // now (no catching up).
  next_iter_ns_ = restart_ ? now_ns + cfg_.iteration_ns : next_iter_ns_ + cfg_.iteration_ns;
  if (next_iter_ns_ <= now_ns) next_iter_ns_ = now_ns + cfg_.iteration_ns;
  restart_ = false;
  return {std::span<const AllocatorUpdate>(out_.data(), n), judged, late};
}

std::span<const AllocatorUpdate> AllocatorCore::lease_pass(uint64_t now_ns) {
  const uint64_t half = cfg_.lease_ns / 2;
  uint32_t n = 0;
  for (FlowId f = 0; f < flow_slots_; ++f) {
    const FlowMeta& m = meta_[f];
    if (!m.live || !m.sent || now_ns - m.last_send_ns < half) continue;
    emit(f, alloc_.last_sent(f), now_ns, n++);
  }
  counters_.updates.add(n);
  counters_.lease_resends.add(n);
  next_lease_ns_ = now_ns + std::max<uint64_t>(cfg_.lease_ns / 4, 1);
  return {out_.data(), n};
}

uint64_t AllocatorCore::next_due_ns() const {
  if (alloc_.flow_count() == 0) return kNever;
  const uint64_t iter = cfg_.iteration_ns == 0 ? 0 : next_iter_ns_;
  return std::min(iter, next_lease_ns_);
}

}  // namespace sluice::flowtune
