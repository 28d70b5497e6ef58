// TCD's marking at dequeue: congestion -> CE, undetermined -> UE unless CE,
// non-congestion -> unchanged; never downgrading CE, erasing an upstream UE
// or touching Not-ECT; configurable codepoints; counts of what it changed.
#include "lib/mechanisms/tcd/tcd_marking.h"

#include <gtest/gtest.h>

namespace sluice {
namespace {

constexpr TcdState kN = TcdState::kNonCongestion;
constexpr TcdState kC = TcdState::kCongestion;
constexpr TcdState kU = TcdState::kUndetermined;
constexpr uint8_t kNotEct = 0b00, kEct1 = 0b01, kEct0 = 0b10, kCe = 0b11;

TEST(TcdMarking, DefaultCodepointsTable) {
  const TcdCodepoints cp;
  EXPECT_EQ(cp.ce, kCe);
  EXPECT_EQ(cp.ue, kEct1);
  // Congestion: every ECN-capable packet leaves CE.
  EXPECT_EQ(tcd_mark_ecn(kC, kEct0, cp), kCe);
  EXPECT_EQ(tcd_mark_ecn(kC, kEct1, cp), kCe);  // an upstream UE rises to CE
  EXPECT_EQ(tcd_mark_ecn(kC, kCe, cp), kCe);
  // Undetermined: UE, unless already CE.
  EXPECT_EQ(tcd_mark_ecn(kU, kEct0, cp), kEct1);
  EXPECT_EQ(tcd_mark_ecn(kU, kEct1, cp), kEct1);
  EXPECT_EQ(tcd_mark_ecn(kU, kCe, cp), kCe);
  // Non-congestion: unchanged, an upstream UE or CE kept.
  EXPECT_EQ(tcd_mark_ecn(kN, kEct0, cp), kEct0);
  EXPECT_EQ(tcd_mark_ecn(kN, kEct1, cp), kEct1);
  EXPECT_EQ(tcd_mark_ecn(kN, kCe, cp), kCe);
}

TEST(TcdMarking, NeverTouchesNotEctNorDowngradesCeNorErasesUe) {
  for (uint8_t ce = 1; ce <= 3; ++ce) {
    for (uint8_t ue = 1; ue <= 3; ++ue) {
      const TcdCodepoints cp{ce, ue};
      if (!valid_codepoints(cp)) continue;
      for (TcdState s : {kN, kC, kU}) {
        SCOPED_TRACE(testing::Message()
                     << "ce " << int(ce) << " ue " << int(ue) << " state " << tcd_state_name(s));
        EXPECT_EQ(tcd_mark_ecn(s, kNotEct, cp), kNotEct);
        EXPECT_EQ(tcd_mark_ecn(s, ce, cp), ce);
        const uint8_t from_ue = tcd_mark_ecn(s, ue, cp);
        EXPECT_TRUE(from_ue == ue || from_ue == ce);
        EXPECT_EQ(from_ue == ce, s == kC);
      }
    }
  }
}

TEST(TcdMarking, ConfiguredCodepointsAreTheOnesWritten) {
  const TcdCodepoints cp{0b10, 0b11};  // CE as ECT(0), UE as 11
  EXPECT_EQ(tcd_mark_ecn(kC, kEct1, cp), kEct0);
  EXPECT_EQ(tcd_mark_ecn(kU, kEct1, cp), kCe);
  EXPECT_EQ(tcd_mark_ecn(kU, kEct0, cp), kEct0);  // already "CE"
  EXPECT_EQ(tcd_mark_ecn(kC, kCe, cp), kEct0);    // "UE" rises to "CE"
  EXPECT_EQ(tcd_mark_ecn(kN, kEct1, cp), kEct1);
  // Only the two ECN bits are read.
  EXPECT_EQ(tcd_mark_ecn(kC, 0b101, TcdCodepoints{}), kCe);
}

TEST(TcdMarking, CodepointsMustBeDistinctAndEcnCapable) {
  EXPECT_TRUE(valid_codepoints(TcdCodepoints{}));
  EXPECT_TRUE(valid_codepoints(TcdCodepoints{2, 1}));
  EXPECT_FALSE(valid_codepoints(TcdCodepoints{3, 3}));
  EXPECT_FALSE(valid_codepoints(TcdCodepoints{0, 1}));
  EXPECT_FALSE(valid_codepoints(TcdCodepoints{3, 0}));
  EXPECT_FALSE(valid_codepoints(TcdCodepoints{4, 1}));
}

TEST(TcdMarking, MarkerCountsOnlyWhatItChanged) {
  TcdMarker m;
  EXPECT_EQ(m.mark(kC, kEct0), kCe);
  EXPECT_EQ(m.mark(kC, kEct1), kCe);
  EXPECT_EQ(m.mark(kC, kCe), kCe);  // already CE: not a mark
  EXPECT_EQ(m.mark(kC, kNotEct), kNotEct);
  EXPECT_EQ(m.mark(kU, kEct0), kEct1);
  EXPECT_EQ(m.mark(kU, kEct1), kEct1);  // already UE: not a mark
  EXPECT_EQ(m.mark(kU, kCe), kCe);
  EXPECT_EQ(m.mark(kN, kEct0), kEct0);
  EXPECT_EQ(m.ce_marks.get(), 2u);
  EXPECT_EQ(m.ue_marks.get(), 1u);
}

}  // namespace
}  // namespace sluice
