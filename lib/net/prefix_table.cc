#include "lib/net/prefix_table.h"

#include <algorithm>

namespace sluice {

void PrefixTable::add(uint32_t addr, uint8_t len, uint32_t next_hop) {
  len = std::min<uint8_t>(len, 32);  // one level a length: at most 32 probes
  const uint32_t mask = len >= 32 ? ~0u : ~0u << (32 - len);
  auto it =
      std::find_if(levels_.begin(), levels_.end(), [&](const Level& l) { return l.len == len; });
  if (it == levels_.end()) {
    Level l;
    l.len = len;
    l.mask = mask;
    l.slots.resize(4);
    l.slot_mask = 3;
    // Longest first: the first level that holds the address wins.
    it = levels_.insert(
        std::find_if(levels_.begin(), levels_.end(), [&](const Level& o) { return o.len < len; }),
        std::move(l));
  }
  const uint32_t before = it->used;
  insert(*it, addr & mask, next_hop);
  routes_ += it->used - before;
  // A level may have been inserted, or its slots moved.
  probe_count_ = static_cast<uint32_t>(levels_.size());
  for (uint32_t i = 0; i < probe_count_; ++i)
    probes_[i] = Probe{levels_[i].mask, levels_[i].slot_mask, levels_[i].slots.data()};
}

// Keeps the load at most a half, so a probe sequence ends soon at an
// empty slot.
void PrefixTable::insert(Level& l, uint32_t key, uint32_t next_hop) {
  if (2 * (l.used + 1) > l.slots.size()) grow(l);
  for (uint32_t i = slot_of(key, l.slot_mask);; i = (i + 1) & l.slot_mask) {
    Slot& s = l.slots[i];
    if (s.next_hop == kNoRoute) {
      s = {key, next_hop};
      ++l.used;
      return;
    }
    if (s.key == key) {
      s.next_hop = next_hop;
      return;
    }
  }
}

void PrefixTable::grow(Level& l) {
  std::vector<Slot> old = std::move(l.slots);
  l.slots.assign(old.size() * 2, Slot{});
  l.slot_mask = static_cast<uint32_t>(l.slots.size() - 1);
  l.used = 0;
  for (const Slot& s : old) {
    if (s.next_hop != kNoRoute) insert(l, s.key, s.next_hop);
  }
}

uint64_t PrefixTable::memory_bytes() const {
  uint64_t b = sizeof(*this) + levels_.capacity() * sizeof(Level);
  for (const Level& l : levels_) b += l.slots.capacity() * sizeof(Slot);
  return b;
}

}  // namespace sluice
