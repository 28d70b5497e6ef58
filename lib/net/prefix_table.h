#pragma once
// Longest-prefix match in a few kilobytes, for the emulator's switches:
// one small open-addressing hash table per prefix length present, probed
// from the longest length down. A fabric switch's routes come in a handful
// of lengths (its ports' /32s, the connected subnets, a pod's or a leaf's
// aggregate), so a lookup is a few probes into tables that stay in the
// cache, where DPDK's DIR-24-8 (rte_lpm) takes 64 MiB per switch whatever
// its routes. Real-time switches keep rte_lpm: one memory access per lookup
// at line rate (docs/packet-processing.md, "Routing").
//
// The route 0.0.0.0/0 is not held here (the caller keeps it beside the
// table, as it does beside rte_lpm).

#include <bit>
#include <cstdint>
#include <vector>

namespace sluice {

// Line-aligned: a lookup reads the table's first line (the longest few
// lengths' probes) and one slot a length it tries.
class alignas(64) PrefixTable {
 public:
  static constexpr uint32_t kNoRoute = UINT32_MAX;

  // Adds, or replaces, the route addr/len (1 <= len <= 32; host bits are
  // ignored) to `next_hop` (not kNoRoute). Cold: start-up only.
  void add(uint32_t addr, uint8_t len, uint32_t next_hop);

  // The next hop of the longest prefix holding addr, or kNoRoute.
  uint32_t lookup(uint32_t addr) const {
    for (uint32_t p = 0; p < probe_count_; ++p) {
      const Probe& l = probes_[p];
      const uint32_t key = addr & l.mask;
      for (uint32_t i = slot_of(key, l.slot_mask);; i = (i + 1) & l.slot_mask) {
        const Slot& s = l.slots[i];
        if (s.next_hop == kNoRoute) break;
        if (s.key == key) return s.next_hop;
      }
    }
    return kNoRoute;
  }

  // Routes held, and the bytes their tables take.
  uint32_t size() const { return routes_; }
  uint64_t memory_bytes() const;

 private:
  struct Slot {
    uint32_t key = 0;
    uint32_t next_hop = kNoRoute;  // kNoRoute: empty
  };
  struct Level {
    uint8_t len = 0;
    uint32_t mask = 0;
    uint32_t slot_mask = 0;  // slots.size() - 1 (a power of two)
    uint32_t used = 0;
    std::vector<Slot> slots;
  };
  // What a lookup reads of a level, kept beside the count (add() refreshes
  // them), so that the levels themselves are not read.
  struct Probe {
    uint32_t mask = 0;
    uint32_t slot_mask = 0;
    const Slot* slots = nullptr;
  };
  static uint32_t slot_of(uint32_t key, uint32_t slot_mask) {
    return static_cast<uint32_t>((uint64_t{key} * 0x9E3779B97F4A7C15ull) >> 32) & slot_mask;
  }
  static void insert(Level& l, uint32_t key, uint32_t next_hop);
  static void grow(Level& l);

  uint32_t probe_count_ = 0;
  Probe probes_[32];           // levels_'s, in its order (one length each)
  std::vector<Level> levels_;  // longest prefix first
  uint32_t routes_ = 0;
};

}  // namespace sluice
