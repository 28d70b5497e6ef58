#pragma once
// A fixed-capacity map from 64-bit keys to 32-bit values, for tables whose
// entries come and go at run time without allocating (Flowtune's allocator:
// flows by sender and flow id, hosts by address, senders by name).
//
// Open addressing with linear probing at load <= 1/2; a removal shifts the
// entries after it back (no tombstones), so a table that churns forever
// keeps its probe lengths. Every key is allowed. No allocation after
// construction; single writer.

#include <algorithm>
#include <bit>
#include <cstdint>
#include <vector>

namespace sluice {

class KeyIndex {
 public:
  static constexpr uint32_t kAbsent = UINT32_MAX;

  // Holds up to `capacity` keys (at least 1).
  explicit KeyIndex(uint32_t capacity)
      : max_(std::max<uint32_t>(capacity, 1)),
        mask_(static_cast<uint32_t>(std::bit_ceil(uint64_t{2} * max_) - 1)),
        slots_(size_t{mask_} + 1) {}

  // The key's value, or kAbsent.
  uint32_t find(uint64_t key) const {
    for (uint32_t s = home(key);; s = (s + 1) & mask_) {
      const Slot& slot = slots_[s];
      if (!slot.used) return kAbsent;
      if (slot.key == key) return slot.value;
    }
  }

  // False (nothing changed) when the key is present or the table is full.
  bool insert(uint64_t key, uint32_t value) {
    for (uint32_t s = home(key);; s = (s + 1) & mask_) {
      Slot& slot = slots_[s];
      if (slot.used) {
        if (slot.key == key) return false;
        continue;
      }
      if (count_ == max_) return false;
      slot = Slot{key, value, true};
      ++count_;
      return true;
    }
  }

  // False when the key is absent.
  bool erase(uint64_t key) {
    uint32_t hole = home(key);
    for (;; hole = (hole + 1) & mask_) {
      if (!slots_[hole].used) return false;
      if (slots_[hole].key == key) break;
    }
    // Entries after the hole that probed past it move back into it.
    for (uint32_t s = (hole + 1) & mask_; slots_[s].used; s = (s + 1) & mask_) {
      const uint32_t h = home(slots_[s].key);
      const bool stays = hole <= s ? (hole < h && h <= s) : (hole < h || h <= s);
      if (stays) continue;
      slots_[hole] = slots_[s];
      hole = s;
    }
    slots_[hole].used = false;
    --count_;
    return true;
  }

  uint32_t size() const { return count_; }
  uint32_t capacity() const { return max_; }

 private:
  struct Slot {
    uint64_t key = 0;
    uint32_t value = 0;
    bool used = false;
  };
  uint32_t home(uint64_t key) const {
    return static_cast<uint32_t>((key * 0x9E3779B97F4A7C15ull) >> 32) & mask_;
  }

  uint32_t max_;
  uint32_t mask_;
  uint32_t count_ = 0;
  std::vector<Slot> slots_;
};

}  // namespace sluice
