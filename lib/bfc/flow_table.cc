#include "lib/bfc/flow_table.h"

#include <cassert>
#include <stdexcept>

namespace sluice {

FlowTable::FlowTable(uint32_t total_queues, uint32_t factor) {
  const uint64_t size = static_cast<uint64_t>(total_queues) * factor;
  if (size == 0 || size > UINT32_MAX)
    throw std::invalid_argument("flow table: factor x total queues must be in 1..2^32-1");
  size_ = static_cast<uint32_t>(size);
  entries_ = std::make_unique<FlowEntry[]>(size_);
}

FlowEntry& FlowTable::claim(uint16_t egress, uint32_t hash, uint32_t* index_out) {
  const uint32_t i = index(egress, hash);
  *index_out = i;
  FlowEntry& e = entries_[i];
  const uint16_t tag = tag_of(hash);
  if (e.used && (e.tag != tag || e.egress != egress)) {
    if (e.packets > 0) index_collisions_.add(1);
  }
  e.tag = tag;
  e.egress = egress;
  return e;
}

void FlowTable::on_enqueue(uint32_t index, uint64_t now_ns) {
  FlowEntry& e = entries_[index];
  if (e.packets++ == 0) occupied_.add(1);
  e.last_active_ns = now_ns;
}

void FlowTable::on_departure(uint32_t index, uint64_t now_ns) {
  FlowEntry& e = entries_[index];
  assert(e.packets > 0);
  if (--e.packets == 0) occupied_.sub(1);
  e.last_active_ns = now_ns;
}

}  // namespace sluice
