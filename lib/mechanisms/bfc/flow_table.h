#pragma once
// BFC flow table: a fixed array of `factor x total queues` entries, indexed by
// (egress port, flow hash) as in the paper (3.3.1). Each egress port has its
// own slice of `factor x queues_per_port` entries, so an entry only ever
// holds flows of one port and a queue number never crosses ports:
//
//   index = base[egress] + hash mod (factor x queues_per_port)
//
// An entry holds the queue assigned to whatever flows hash onto it, how many
// of their packets are in the switch, and when one last arrived or left.
// docs/mechanisms/bfc.md ("Flow table"). Different flows of one port may
// share an entry. An index collision is counted once per flow that joins an
// entry while another flow has packets in it: the entry keeps the 16-bit tag
// (hash >> 16) of the flow that took it while empty, and one bit (tag mod 32)
// per flow already counted since. Missed: a joiner with the owner's tag
// (2^-16) or with a counted joiner's bit (1/32 per such joiner).
//
// Single writer (the lcore owning the egress ports); no allocation after
// construction.

#include <cassert>
#include <cstdint>
#include <memory>
#include <span>

#include "lib/common/relaxed_counter.h"

namespace sluice {

struct FlowEntry {
  uint64_t last_active_ns = 0;  // last arrival or departure of a packet
  uint32_t packets = 0;         // packets of this entry in the switch
  uint32_t joined = 0;          // bit tag % 32 of each flow counted as colliding
  uint16_t queue = 0;           // assigned queue of the egress port
  uint16_t tag = 0;             // tag of the flow that took the entry while empty
  bool used = false;            // ever claimed (queue and last_active_ns valid)
};

class FlowTable {
 public:
  static constexpr uint32_t kDefaultFactor = 100;

  // A slice for each port p with egress_ports[p] (the egress ports of this
  // lcore). Throws std::invalid_argument when no port has a slice,
  // queues_per_port or factor is 0, or the size does not fit 32 bits.
  FlowTable(std::span<const bool> egress_ports, uint32_t queues_per_port,
            uint32_t factor = kDefaultFactor);

  uint32_t size() const { return size_; }
  uint32_t slice_size() const { return slice_; }
  bool has_slice(uint16_t egress) const { return egress < num_ports_ && base_[egress] != kNoSlice; }
  uint32_t index(uint16_t egress, uint32_t hash) const {
    assert(has_slice(egress));
    return base_[egress] + slice_remainder(hash);
  }
  static uint16_t tag_of(uint32_t hash) { return static_cast<uint16_t>(hash >> 16); }

  // A packet of flow `hash` in entry `index` entered / left the switch (left:
  // dequeued or dropped after enqueue). Keeps the occupancy count and, on
  // entry, the index-collision count. (Per packet, so defined inline.)
  void on_enqueue(uint32_t index, uint32_t hash, uint64_t now_ns) {
    FlowEntry& e = entries_[index];
    count_collision(e, tag_of(hash));
    if (e.packets++ == 0) occupied_.add(1);
    e.last_active_ns = now_ns;
  }
  void on_departure(uint32_t index, uint64_t now_ns) {
    FlowEntry& e = entries_[index];
    assert(e.packets > 0);
    if (--e.packets == 0) occupied_.sub(1);
    e.last_active_ns = now_ns;
  }

  // on_enqueue() then on_departure() at one instant: a packet that cut
  // through an idle port (it was in the switch for no time at all).
  void on_pass(uint32_t index, uint32_t hash, uint64_t now_ns) {
    FlowEntry& e = entries_[index];
    count_collision(e, tag_of(hash));
    e.last_active_ns = now_ns;
  }

  const FlowEntry& at(uint32_t index) const { return entries_[index]; }
  FlowEntry& at(uint32_t index) { return entries_[index]; }
  // Entries with packets in the switch.
  uint64_t occupied() const { return occupied_.get(); }
  uint64_t index_collisions() const { return index_collisions_.get(); }

 private:
  static constexpr uint32_t kNoSlice = UINT32_MAX;

  // hash % slice_ by two multiplications instead of a division (Lemire, Kaser,
  // Kurz, "Faster Remainder by Direct Computation", 2019): exact for every
  // 32-bit hash and slice, with slice_magic_ = 2^64 / slice_ rounded up.
  uint32_t slice_remainder(uint32_t hash) const {
    const uint64_t fraction = slice_magic_ * hash;  // mod 2^64
    return static_cast<uint32_t>((static_cast<unsigned __int128>(fraction) * slice_) >> 64);
  }

  // An empty entry becomes the arriving flow's (taking over an idle entry is
  // no collision); a busy one counts each other flow once.
  void count_collision(FlowEntry& e, uint16_t tag) {
    if (e.packets == 0) {
      e.tag = tag;
      e.joined = 0;
      return;
    }
    const uint32_t bit = uint32_t{1} << (tag % 32);
    if (tag == e.tag || (e.joined & bit) != 0) return;
    e.joined |= bit;
    index_collisions_.add(1);
  }

  uint32_t num_ports_;
  uint32_t slice_;
  uint64_t slice_magic_;  // UINT64_MAX / slice_ + 1 (0 for a slice of 1: every remainder is 0)
  uint32_t size_ = 0;
  std::unique_ptr<uint32_t[]> base_;  // first entry of each port's slice, or kNoSlice
  std::unique_ptr<FlowEntry[]> entries_;
  RelaxedCounter occupied_;
  RelaxedCounter index_collisions_;
};

}  // namespace sluice
