#pragma once
// An emulated host's flows by id (flow id -> its index among the host's
// senders or receivers), built once before the run and looked up for every
// segment the host receives. Open addressing with linear probing in a
// power-of-two table at most half full: a lookup reads one line, where
// std::unordered_map reads a bucket and then a node, each cold in a large
// fabric.

#include <cstdint>
#include <memory>

namespace sluice {

class FlowIndex {
 public:
  static constexpr uint32_t kNone = UINT32_MAX;

  // Room for `n` ids; clears what was there.
  void reserve(uint32_t n) {
    bits_ = 1;
    while ((uint64_t{1} << bits_) < uint64_t{2} * n) ++bits_;
    slots_ = std::make_unique<Slot[]>(size_t{1} << bits_);
  }
  // Maps id to index (index < kNone); an id given again takes the new one.
  // At most the reserved number of distinct ids.
  void insert(uint32_t id, uint32_t index) {
    Slot& s = slot_for(id);
    s.id = id;
    s.index_plus_one = index + 1;
  }
  // id's index, or kNone.
  uint32_t find(uint32_t id) const {
    if (slots_ == nullptr) return kNone;
    const uint32_t mask = (1u << bits_) - 1;
    for (uint32_t i = home(id);; i = (i + 1) & mask) {
      const Slot& s = slots_[i];
      if (s.index_plus_one == 0) return kNone;
      if (s.id == id) return s.index_plus_one - 1;
    }
  }

 private:
  struct Slot {
    uint32_t id = 0;
    uint32_t index_plus_one = 0;  // 0: empty
  };
  uint32_t home(uint32_t id) const { return (id * 0x9E3779B1u) >> (32 - bits_); }
  Slot& slot_for(uint32_t id) {
    const uint32_t mask = (1u << bits_) - 1;
    uint32_t i = home(id);
    while (slots_[i].index_plus_one != 0 && slots_[i].id != id) i = (i + 1) & mask;
    return slots_[i];
  }

  uint32_t bits_ = 1;
  std::unique_ptr<Slot[]> slots_;
};

}  // namespace sluice
