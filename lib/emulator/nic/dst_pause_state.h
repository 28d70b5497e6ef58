#pragma once
// What an emulated host NIC keeps of Floodgate's dstPause (FG_DST_PAUSE,
// SPEC 4.1; the paper's ideal per-destination PAUSE, "Floodgate: Taming
// Incast in Datacenter Networks" 5.4): the destinations the switch holds
// paused, and counts of what it received. The paper's rule has no timeout: a
// destination stays paused until a resume for it arrives (a lost resume
// holds it until the switch sends another; docs/pcap-ports.md).
//
// A sorted array of at most `capacity` IPv4 addresses, fixed at
// construction: pick() looks up every candidate queue's head, so a lookup is
// a binary search, and a change (a control frame, rare) moves the tail. A
// pause beyond capacity is counted in `overflow` and not held. Destination 0
// (a frame that is not IPv4) is never paused. Changes come in time order;
// time is an argument (ns). Counters have one writer, any reader.

#include <cstdint>
#include <vector>

#include "lib/common/relaxed_counter.h"

namespace sluice {

class DstPauseState {
 public:
  explicit DstPauseState(uint32_t capacity);

  bool paused(uint32_t dst) const { return size_ != 0 && dst != 0 && find(dst) != kNone; }
  uint32_t size() const { return size_; }
  uint32_t capacity() const { return static_cast<uint32_t>(dsts_.size()); }

  // A pause (pause true) or resume of dst at at_ns: true when dst's state
  // changed. Counts the entry as a pause or a resume either way.
  bool apply(uint64_t at_ns, uint32_t dst, bool pause);

  // Time paused summed over the destinations up to now_ns (not before the
  // last apply): two destinations paused 1 ms each add 2 ms.
  uint64_t paused_ns(uint64_t now_ns) const {
    return closed_ns_ + (now_ns > changed_ns_ ? uint64_t{size_} * (now_ns - changed_ns_) : 0);
  }

  // Kept by HostNic::receive(): FG_DST_PAUSE frames taken, and sluice
  // control frames that did not parse or named destination 0.0.0.0.
  RelaxedCounter frames;
  RelaxedCounter invalid;
  RelaxedCounter pauses;      // pause entries applied (repeats included)
  RelaxedCounter resumes;     // resume entries applied (of unpaused ones included)
  RelaxedCounter overflow;    // pauses of a new destination with the set full
  RelaxedCounter now_paused;  // size(), for readers on other threads

 private:
  static constexpr uint32_t kNone = UINT32_MAX;
  uint32_t find(uint32_t dst) const;
  uint32_t lower_bound(uint32_t dst) const;
  void advance(uint64_t at_ns);

  std::vector<uint32_t> dsts_;  // [0, size_) sorted; sized once
  uint32_t size_ = 0;
  uint64_t closed_ns_ = 0;
  uint64_t changed_ns_ = 0;
};

}  // namespace sluice
