#pragma once
// A fixed-capacity table of per-(port, destination) state for Floodgate:
// per link (dstPause, loss recovery), or per switch with one port number
// for all (the windows). Open addressing at load
// <= 1/2, entries never removed: a pair's state is cumulative or returns to
// its idle value by itself. A pair that finds the table full gets none; the
// caller counts it. No allocation after construction.

#include <algorithm>
#include <bit>
#include <cstdint>
#include <vector>

namespace sluice {

template <class Value>
class PortDstTable {
 public:
  explicit PortDstTable(uint32_t max_pairs)
      : max_(std::max<uint32_t>(max_pairs, 1)),
        mask_(std::bit_ceil(2 * max_) - 1),
        slots_(size_t{mask_} + 1) {}

  // The pair's state, added (value-initialised) when `add` and there is
  // room; *added (when given) says whether this call added it.
  Value* find(uint32_t port, uint32_t dst, bool add, bool* added = nullptr) {
    if (added != nullptr) *added = false;
    const uint64_t key = (uint64_t{port} + 1) << 32 | dst;
    const uint64_t h = key * 0x9E3779B97F4A7C15ull;
    for (uint32_t s = static_cast<uint32_t>(h >> 40) & mask_;; s = (s + 1) & mask_) {
      Slot& slot = slots_[s];
      if (slot.key == key) return &slot.value;
      if (slot.key != 0) continue;
      if (!add || count_ == max_) return nullptr;
      ++count_;
      slot.key = key;
      if (added != nullptr) *added = true;
      return &slot.value;
    }
  }
  const Value* find(uint32_t port, uint32_t dst) const {
    return const_cast<PortDstTable*>(this)->find(port, dst, false);
  }

  // Calls fn(dst, value) for the pairs of `port` from slot *cursor on, until
  // fn returns false (that pair is visited again next time) or the table
  // ends (*cursor == slots()). For lists split over several frames.
  template <class Fn>
  void visit(uint32_t port, uint32_t* cursor, Fn&& fn) {
    for (; *cursor < slots_.size(); ++*cursor) {
      Slot& slot = slots_[*cursor];
      if (slot.key >> 32 != uint64_t{port} + 1) continue;
      if (!fn(static_cast<uint32_t>(slot.key), slot.value)) return;
    }
  }

  uint32_t capacity() const { return max_; }
  uint32_t slots() const { return mask_ + 1; }
  uint32_t size() const { return count_; }

 private:
  struct Slot {
    uint64_t key = 0;  // (port + 1) << 32 | dst; 0: free
    Value value{};
  };
  uint32_t max_;
  uint32_t mask_;
  uint32_t count_ = 0;
  std::vector<Slot> slots_;
};

}  // namespace sluice
