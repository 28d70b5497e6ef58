#include "lib/mechanisms/flowtune/flowlet_table.h"

#include "lib/mechanisms/flowtune/flow_key.h"

#include <bit>
#include <stdexcept>

namespace sluice {

FlowletTable::FlowletTable(uint32_t capacity, uint64_t idle_gap_ns) : gap_(idle_gap_ns) {
  if (capacity < kWays || capacity > (1u << 24) || !std::has_single_bit(capacity))
    throw std::invalid_argument("flowlet table capacity: a power of two in [4, 2^24]");
  if (idle_gap_ns == 0) throw std::invalid_argument("flowlet idle gap must be > 0");
  slots_.resize(capacity);
  slot_bits_ = static_cast<uint32_t>(std::countr_zero(capacity));
  bucket_mask_ = capacity / kWays - 1;
}

uint32_t FlowletTable::next_id(uint32_t slot) {
  const uint32_t limit = 1u << (32 - slot_bits_);  // counter values that fit
  counter_ = (counter_ + 1) & (limit - 1);
  if (counter_ == 0) counter_ = 1;  // id 0 is "none"
  return (counter_ << slot_bits_) | slot;
}

FlowletTable::Result FlowletTable::on_packet(uint64_t key, uint32_t src_ip, uint32_t dst_ip,
                                             uint64_t now_ns) {
  const uint32_t base = static_cast<uint32_t>(mix64(key) & bucket_mask_) * kWays;
  int free_way = -1;
  int stale_way = -1;  // a live entry of another flow, idle past the gap
  bool others = false;
  for (uint32_t w = 0; w < kWays; ++w) {
    Slot& s = slots_[base + w];
    if (s.id == 0) {
      if (free_way < 0) free_way = static_cast<int>(w);
      continue;
    }
    if (s.key == key) {
      if (idle(s, now_ns)) {  // the previous flowlet ended; expire() had not seen it yet
        const uint32_t ended = s.id;
        flowlets_ended.add();
        s.id = next_id(base + w);
        s.last_ns = now_ns;
        s.src_ip = src_ip;
        s.dst_ip = dst_ip;
        flowlets_started.add();
        started(now_ns);
        return {Kind::kStart, s.id, ended};
      }
      if (now_ns > s.last_ns) s.last_ns = now_ns;
      return {Kind::kContinue, s.id, 0};
    }
    others = true;
    if (stale_way < 0 && idle(s, now_ns)) stale_way = static_cast<int>(w);
  }
  uint32_t ended = 0;
  int way = free_way;
  if (way < 0 && stale_way >= 0) {  // take over an ended flowlet's slot, report its END
    way = stale_way;
    ended = slots_[base + way].id;
    flowlets_ended.add();
    --active_;
  }
  if (way < 0) {
    table_full.add();
    return {Kind::kUntracked, 0, 0};
  }
  if (others) collisions.add();
  Slot& s = slots_[base + way];
  s.key = key;
  s.last_ns = now_ns;
  s.src_ip = src_ip;
  s.dst_ip = dst_ip;
  s.id = next_id(base + way);
  ++active_;
  flowlets_started.add();
  started(now_ns);
  return {Kind::kStart, s.id, ended};
}

}  // namespace sluice
