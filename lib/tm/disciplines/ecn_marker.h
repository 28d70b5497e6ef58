#pragma once
// ECN marking decision at enqueue, on the instantaneous queue.
//
// The queue length compared is the occupancy the packet finds on arrival,
// i.e. the queue's bytes *before* the packet joins it (as DCTCP states it:
// "mark the arriving packet if the queue occupancy is greater than K upon its
// arrival").
//  - kStep: mark when queue > K.
//  - kRed:  queue < min: never; min <= queue < max: with probability
//           pmax * (queue - min) / (max - min); queue >= max: always.
//           (No averaging and no drops: this is RED as an ECN marker on the
//           instantaneous queue, as datacenter switches configure it.)
// Only ECN-capable packets are marked; the caller rewrites the header.
// The RED coin is a xorshift64* generator seeded by the constructor, so a run
// is reproducible.

#include <cstdint>

#include "lib/common/relaxed_counter.h"
#include "lib/common/xorshift.h"
#include "lib/config/config.h"

namespace sluice {

class EcnMarker {
 public:
  // Throws std::invalid_argument for RED with max <= min or pmax outside [0, 1].
  EcnMarker(const EcnConfig& cfg, uint64_t seed);

  EcnMode mode() const { return mode_; }

  // Decides (and counts) whether a packet arriving at a queue holding
  // queue_bytes is to be marked CE.
  bool should_mark(uint64_t queue_bytes, bool ecn_capable) {
    // One compare for the common case in every mode: below the lowest queue
    // that may be marked.
    if (!ecn_capable || queue_bytes < lowest_marked_) return false;
    return decide(queue_bytes);
  }

  // Whether should_mark(0, true) is false without deciding anything (no
  // RED coin drawn): a packet finding its queue empty is never marked.
  bool never_marks_empty() const { return lowest_marked_ > 0; }
  // No queue below this is marked (UINT64_MAX: none is); a caller may keep
  // a copy to test before should_mark.
  uint64_t lowest_marked() const { return lowest_marked_; }

  // RED marking probability at queue_bytes (in [min, max)), scaled to 2^32.
  uint64_t red_probability32(uint64_t queue_bytes) const {
    unsigned __int128 p = static_cast<unsigned __int128>(queue_bytes - red_min_) * red_slope_;
    return static_cast<uint64_t>(p >> kSlopeFracBits);
  }

  uint64_t marks() const { return marks_.get(); }

 private:
  static constexpr unsigned kSlopeFracBits = 24;

  uint64_t next_random() { return rng_.next(); }

  bool decide(uint64_t queue_bytes) {
    bool mark;
    if (mode_ == EcnMode::kStep) {
      mark = queue_bytes > step_k_;
    } else if (mode_ != EcnMode::kRed || queue_bytes < red_min_) {
      mark = false;
    } else if (queue_bytes >= red_max_) {
      mark = true;
    } else {
      mark = (next_random() >> 32) < red_probability32(queue_bytes);
    }
    if (mark) marks_.add(1);
    return mark;
  }

  EcnMode mode_;
  uint64_t step_k_;
  uint64_t red_min_;
  uint64_t red_max_;
  uint64_t red_slope_ = 0;               // pmax * 2^(32 + kSlopeFracBits) / (max - min)
  uint64_t lowest_marked_ = UINT64_MAX;  // no queue below this is marked
  Xorshift64 rng_;
  RelaxedCounter marks_;
};

}  // namespace sluice
