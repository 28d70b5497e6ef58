#pragma once
// A set of queue numbers 0..size-1 (size up to 4096, a queue per flow of an
// RDMA NIC) as bits, with a summary word whose bit i says word i is not
// zero, so that finding members costs a bit scan per word that has one, not
// a step per queue. Storage is sized at construction: ceil(size / 64) words.
// Single writer; no allocation after construction.

#include <bit>
#include <cstdint>
#include <memory>

namespace sluice {

class QueueSet {
 public:
  static constexpr uint32_t kMaxSize = 64 * 64;

  QueueSet() = default;
  explicit QueueSet(uint32_t size)
      : size_(size > kMaxSize ? kMaxSize : size),
        words_(std::make_unique<uint64_t[]>((size_ + 63) / 64)) {}

  uint32_t size() const { return size_; }
  uint32_t num_words() const { return (size_ + 63) / 64; }
  bool test(uint32_t q) const { return (words_[q / 64] >> (q % 64)) & 1; }
  void set(uint32_t q) {
    words_[q / 64] |= uint64_t{1} << (q % 64);
    summary_ |= uint64_t{1} << (q / 64);
  }
  void reset(uint32_t q) {
    uint64_t& w = words_[q / 64];
    w &= ~(uint64_t{1} << (q % 64));
    if (w == 0) summary_ &= ~(uint64_t{1} << (q / 64));
  }
  bool any() const { return summary_ != 0; }
  uint32_t count() const {
    uint32_t n = 0;
    for (uint64_t s = summary_; s != 0; s &= s - 1) n += std::popcount(words_[std::countr_zero(s)]);
    return n;
  }
  uint64_t word(uint32_t i) const { return words_[i]; }
  const uint64_t* words() const { return words_.get(); }  // num_words() of them
  uint64_t summary() const { return summary_; }           // bit i: word(i) != 0

 private:
  uint32_t size_ = 0;
  uint64_t summary_ = 0;
  std::unique_ptr<uint64_t[]> words_;
};

// Visits the members of a set given by words, in rotation order from queue
// `from`: from, from + 1, ..., the last member, 0, ..., from - 1. `summary` has bit
// i set for every word i that may have members (a superset is fine);
// word(i) gives word i's members. fn(q) returns true to stop; the visit
// returns whether one did.
template <class WordFn, class Fn>
bool visit_from(uint64_t summary, uint32_t from, WordFn&& word, Fn&& fn) {
  auto scan = [&](uint32_t i, uint64_t m) {
    for (; m != 0; m &= m - 1)
      if (fn(i * 64 + static_cast<uint32_t>(std::countr_zero(m)))) return true;
    return false;
  };
  // The first word's members at or after `from`, the words after it, the
  // words before it, then the first word's members before `from` (the
  // first word read once: with 64 queues or fewer it is the only one).
  const uint32_t first = from / 64;
  const uint64_t at_or_after = ~uint64_t{0} << (from % 64);
  const uint64_t w = (summary >> first) & 1 ? word(first) : 0;
  if (scan(first, w & at_or_after)) return true;
  const uint64_t others = summary & ~(uint64_t{1} << first);
  if (others != 0) [[unlikely]] {
    const uint64_t after = first == 63 ? 0 : others & (~uint64_t{0} << (first + 1));
    for (uint64_t s = after; s != 0; s &= s - 1) {
      const uint32_t i = static_cast<uint32_t>(std::countr_zero(s));
      if (scan(i, word(i))) return true;
    }
    for (uint64_t s = others & ~after; s != 0; s &= s - 1) {
      const uint32_t i = static_cast<uint32_t>(std::countr_zero(s));
      if (scan(i, word(i))) return true;
    }
  }
  return scan(first, w & ~at_or_after);
}

}  // namespace sluice
