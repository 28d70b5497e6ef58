#pragma once
// DIBS's choice of a detour port (SPEC 4.3; "DIBS: Just-in-time Congestion
// Mitigation for Data Centers", sections 2 and 7): when buffer admission
// refuses a data packet at its egress, it leaves instead by another
// switch-facing port whose queue admits it.
//
//   random      uniformly at random among the admitting candidates (the
//               paper's policy): one pass of reservoir sampling, so no list
//               of the admitting ports is built;
//   load_aware  the admitting candidate with the least queued bytes (the
//               paper's "load-aware detouring", section 7), ties broken
//               uniformly at random the same way.
//
// The caller lists the switch's ports as candidates, each with its role and
// whether its queue would admit this packet by the ordinary admission test
// (dynamic threshold, buffer room, ring room; a paused queue does not
// admit). The ingress port is a candidate like any other: the paper bounces
// packets back toward where they came from. The original egress and every
// host-facing port are skipped here whatever the caller passes, so a detour
// can never go to a host (hosts do not forward what is not theirs) or back
// into the queue that refused it.
//
// One chooser per lcore and switch (its generator is not shared); seeded, so
// a run replays exactly. No allocation, no clock. docs/mechanisms/dibs.md.

#include <cstdint>

#include "lib/common/xorshift.h"
#include "lib/config/config.h"  // DibsPolicy, PortRole

namespace sluice {

// choose() found no candidate that admits the packet.
inline constexpr uint16_t kNoDetour = UINT16_MAX;

struct DetourCandidate {
  uint16_t port = 0;                // the switch's port index
  PortRole role = PortRole::kHost;  // only kSwitch is ever chosen
  bool admits = false;              // its queue would take this packet now
  uint64_t queued_bytes = 0;        // load_aware ranks by this
};

class DetourChooser {
 public:
  DetourChooser(DibsPolicy policy, uint64_t seed) : policy_(policy), rng_(seed) {}

  // The port among candidates[0..n) to detour to instead of `egress`, or
  // kNoDetour when no switch-facing candidate other than egress admits.
  uint16_t choose(const DetourCandidate* candidates, uint32_t n, uint16_t egress) {
    return policy_ == DibsPolicy::kLoadAware ? least_queued(candidates, n, egress)
                                             : uniform(candidates, n, egress);
  }

  DibsPolicy policy() const { return policy_; }

 private:
  static bool eligible(const DetourCandidate& c, uint16_t egress) {
    return c.admits && c.role == PortRole::kSwitch && c.port != egress;
  }
  // True with probability 1/k (k >= 1; to within k / 2^32): the k-th of k
  // equal claims replaces the one kept, which leaves each kept with 1/k.
  bool one_in(uint32_t k) { return k == 1 || ((uint64_t{rng_.next32()} * k) >> 32) == 0; }

  uint16_t uniform(const DetourCandidate* c, uint32_t n, uint16_t egress) {
    uint16_t kept = kNoDetour;
    uint32_t seen = 0;
    for (uint32_t i = 0; i < n; ++i) {
      if (eligible(c[i], egress) && one_in(++seen)) kept = c[i].port;
    }
    return kept;
  }

  uint16_t least_queued(const DetourCandidate* c, uint32_t n, uint16_t egress) {
    uint16_t kept = kNoDetour;
    uint64_t least = UINT64_MAX;
    uint32_t ties = 0;
    for (uint32_t i = 0; i < n; ++i) {
      if (!eligible(c[i], egress)) continue;
      if (c[i].queued_bytes < least || kept == kNoDetour) {
        least = c[i].queued_bytes;
        ties = 1;
        kept = c[i].port;
      } else if (c[i].queued_bytes == least && one_in(++ties)) {
        kept = c[i].port;
      }
    }
    return kept;
  }

  DibsPolicy policy_;
  Xorshift64 rng_;
};

}  // namespace sluice
