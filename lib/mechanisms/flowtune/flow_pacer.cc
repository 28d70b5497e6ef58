#include "lib/mechanisms/flowtune/flow_pacer.h"

#include <algorithm>
#include <bit>
#include <stdexcept>

namespace sluice {

FlowPacer::FlowPacer(uint32_t capacity, Config config) : config_(config), mask_(capacity - 1) {
  if (capacity == 0 || !std::has_single_bit(capacity))
    throw std::invalid_argument("flow pacer capacity must be a power of two");
  flows_.resize(capacity);
}

void FlowPacer::start(uint32_t flow_id) {
  if (flow_id == 0) return;
  Flow& f = flows_[flow_id & mask_];
  f = Flow{};
  f.id = flow_id;
}

bool FlowPacer::set_rate(uint32_t flow_id, uint32_t kbps, uint64_t now_ns, uint64_t lease_ns) {
  Flow* f = find(flow_id);
  if (f == nullptr) {
    stale.add();
    return false;
  }
  f->kbps = kbps;
  f->lease_end_ns = now_ns + lease_ns;
  return true;
}

FlowPacer::Verdict FlowPacer::admit(uint32_t flow_id, uint32_t bytes, uint64_t now_ns) {
  Flow* f = find(flow_id);
  if (f == nullptr || f->kbps == 0 || now_ns >= f->lease_end_ns) {
    unpaced.add();
    return {Action::kUnpaced, now_ns, false};
  }
  const uint64_t now_ps = now_ns * 1000;
  if (f->next_send_ps > now_ps && f->held_packets >= config_.max_held_packets) {
    dropped.add();
    return {Action::kDrop, 0, false};
  }
  const uint64_t t_ps = std::max(now_ps, f->next_send_ps);
  // bytes·8 bits at kbps·1000 bit/s = bytes·8e9/kbps ps; bytes capped at
  // 2^20 so the product fits in 64 bits.
  const uint64_t b = std::min<uint64_t>(bytes, kMaxPacketBytes);
  f->next_send_ps = t_ps + b * 8'000'000'000ULL / f->kbps;
  if (t_ps == now_ps) {
    paced.add();
    return {Action::kSend, now_ns, false};
  }
  ++f->held_packets;
  f->held_bytes += bytes;
  held.add();
  const bool mark = f->held_bytes > config_.ecn_threshold_bytes;
  if (mark) marked.add();
  return {Action::kHold, (t_ps + 999) / 1000, mark};
}

void FlowPacer::sent(uint32_t flow_id, uint32_t bytes) {
  Flow* f = find(flow_id);
  if (f == nullptr || f->held_packets == 0) return;
  --f->held_packets;
  f->held_bytes -= std::min<uint64_t>(bytes, f->held_bytes);
}

bool FlowPacer::fresh(uint32_t flow_id, uint64_t now_ns) const {
  const Flow* f = find(flow_id);
  return f != nullptr && f->kbps != 0 && now_ns < f->lease_end_ns;
}
uint32_t FlowPacer::rate_kbps(uint32_t flow_id) const {
  const Flow* f = find(flow_id);
  return f != nullptr ? f->kbps : 0;
}
uint32_t FlowPacer::held_packets(uint32_t flow_id) const {
  const Flow* f = find(flow_id);
  return f != nullptr ? f->held_packets : 0;
}
uint64_t FlowPacer::held_bytes(uint32_t flow_id) const {
  const Flow* f = find(flow_id);
  return f != nullptr ? f->held_bytes : 0;
}

}  // namespace sluice
