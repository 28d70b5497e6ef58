#pragma once
// TCD's marking at dequeue (SPEC 4.4; docs/mechanisms/tcd.md, "Marking"):
// congestion -> CE, undetermined -> UE unless already CE, non-congestion ->
// unchanged. Marks only ever rise in the order ECT < UE < CE: a CE is never
// downgraded, an upstream UE never erased (congestion still raises it to
// CE), and a Not-ECT packet is never touched. Both codepoints are
// configurable (defaults CE = 11, UE = 01, i.e. ECT(1)).

#include <cstdint>

#include "lib/common/relaxed_counter.h"
#include "lib/mechanisms/tcd/tcd_state.h"

namespace sluice {

struct TcdCodepoints {
  uint8_t ce = 0b11;
  uint8_t ue = 0b01;
};

// Both ECN-capable (not 00), two bits, and distinct.
constexpr bool valid_codepoints(TcdCodepoints cp) {
  return cp.ce >= 1 && cp.ce <= 3 && cp.ue >= 1 && cp.ue <= 3 && cp.ce != cp.ue;
}

// The packet's new ECN field (two bits) given the state of the queue it
// leaves. Codepoints must be valid_codepoints().
constexpr uint8_t tcd_mark_ecn(TcdState s, uint8_t ecn, TcdCodepoints cp) {
  ecn &= 0b11;
  if (ecn == 0 || ecn == cp.ce) return ecn;
  switch (s) {
    case TcdState::kCongestion:
      return cp.ce;
    case TcdState::kUndetermined:
      return cp.ue;
    case TcdState::kNonCongestion:
      break;
  }
  return ecn;
}

// tcd_mark_ecn with counts of the packets it changed (one per port, say).
class TcdMarker {
 public:
  explicit constexpr TcdMarker(TcdCodepoints cp = {}) : cp_(cp) {}

  uint8_t mark(TcdState s, uint8_t ecn) {
    ecn &= 0b11;
    const uint8_t out = tcd_mark_ecn(s, ecn, cp_);
    if (out != ecn) [[unlikely]] {
      if (out == cp_.ce) {
        ce_marks.add(1);
      } else {
        ue_marks.add(1);
      }
    }
    return out;
  }
  TcdCodepoints codepoints() const { return cp_; }

  RelaxedCounter ce_marks;  // packets set to CE here
  RelaxedCounter ue_marks;  // packets set to UE here

 private:
  TcdCodepoints cp_;
};

}  // namespace sluice
