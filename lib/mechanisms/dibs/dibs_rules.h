#pragma once
// DIBS's rules for one lcore's share of a switch, in the order the data
// path meets them (SPEC 4.3; docs/mechanisms/dibs.md, "In the data path"):
//
//   on_refused()         buffer admission refused a data packet: may it
//                        still be detoured (max_detours), and to which port
//                        (DetourChooser)? Counts the drop when it may not;
//   on_detoured()        the chosen port's owner enqueued it (charged there
//                        like any packet, then marked CE if ECN-capable);
//   on_detour_refused()  that owner's own admission test refused it (the
//                        chooser saw an older snapshot of the port);
//   on_exit()            a packet was enqueued toward a host-facing port:
//                        its detour count goes into the histogram.
//
// The data path writes DetourDecision::detours into the shim of the
// detoured packet. One instance per lcore and switch; single writer, no
// allocation after construction, no clock (nothing here depends on time).

#include <cstdint>

#include "lib/common/drop_reason.h"
#include "lib/config/config.h"
#include "lib/mechanisms/dibs/detour_chooser.h"
#include "lib/mechanisms/dibs/detour_count.h"
#include "lib/mechanisms/dibs/dibs_counters.h"

namespace sluice {

struct DetourDecision {
  uint16_t port = kNoDetour;               // send it here; kNoDetour: drop it
  uint8_t detours = 0;                     // its count after this detour (for the shim)
  DropReason reason = DropReason::kCount;  // port == kNoDetour: count the drop under this
};

class DibsRules {
 public:
  // port_count: the switch's ports (indices the candidates and counters use).
  DibsRules(const DibsConfig& cfg, uint32_t port_count, uint64_t seed)
      : counters(port_count), chooser_(cfg.policy, seed), max_detours_(cfg.max_detours) {}

  // A data packet that has taken `detours` was refused at `egress`;
  // candidates[0..n) are the switch's switch-facing ports as the caller sees
  // them now (see DetourChooser).
  DetourDecision on_refused(uint8_t detours, const DetourCandidate* candidates, uint32_t n,
                            uint16_t egress) {
    if (!may_detour(detours, max_detours_)) return drop(DetourDrop::kMaxDetours);
    const uint16_t port = chooser_.choose(candidates, n, egress);
    if (port == kNoDetour) return drop(DetourDrop::kNoPort);
    return {port, next_detour_count(detours), DropReason::kCount};
  }
  void on_detoured(uint16_t port) { counters.count_detour(port); }
  // Returns the reason to count the port drop under.
  DropReason on_detour_refused() {
    counters.count_drop(DetourDrop::kRefused);
    return drop_reason_of(DetourDrop::kRefused);
  }
  void on_exit(uint8_t detours) { counters.count_exit(detours); }

  uint32_t max_detours() const { return max_detours_; }
  DibsPolicy policy() const { return chooser_.policy(); }

  DibsCounters counters;

 private:
  DetourDecision drop(DetourDrop why) {
    counters.count_drop(why);
    return {kNoDetour, 0, drop_reason_of(why)};
  }

  DetourChooser chooser_;
  uint32_t max_detours_;
};

}  // namespace sluice
