// The seeds of the data path's random choices (lib/common/seeds.h).
#include "lib/common/seeds.h"

#include <gtest/gtest.h>

#include <array>
#include <random>
#include <set>

namespace sluice {
namespace {

TEST(Seeds, OneSeedPerStreamAndElementAndAnotherSeedChangesThemAll) {
  std::set<uint64_t> seen;
  for (uint64_t stream = 1; stream <= 5; ++stream) {
    for (uint64_t i = 0; i < 100; ++i) {
      const uint64_t s = derive_seed(1, static_cast<SeedStream>(stream), i);
      EXPECT_EQ(s, derive_seed(1, static_cast<SeedStream>(stream), i));  // repeatable
      EXPECT_NE(s, derive_seed(2, static_cast<SeedStream>(stream), i));
      seen.insert(s);
    }
  }
  EXPECT_EQ(seen.size(), 500u);  // no two generators share a seed
}

// Two tiers of ECMP (a fat-tree's edge then aggregation switch, 4 members
// each) with the salt: among the flows one edge member sends up, the next
// tier still spreads over all its members evenly. Unsalted, each
// aggregation switch would see only the quarter of hashes its edge choice
// left, and pick a single member for all of them.
TEST(Seeds, SaltedTiersOfEcmpDoNotPolarise) {
  const uint64_t edge = derive_seed(1, SeedStream::kEcmp, 0);
  const uint64_t agg = derive_seed(1, SeedStream::kEcmp, 7);
  std::array<std::array<int, 4>, 4> count{};
  std::array<std::array<int, 4>, 4> unsalted{};
  std::mt19937_64 rng(3);
  constexpr int kFlows = 160'000;
  for (int i = 0; i < kFlows; ++i) {
    const uint32_t h = flow_hash(static_cast<uint32_t>(rng()), static_cast<uint32_t>(rng()), 6,
                                 static_cast<uint16_t>(rng()), static_cast<uint16_t>(rng()));
    const uint32_t up = ecmp_pick(static_cast<uint32_t>(salted_flow_hash(h, edge) >> 32), 4);
    const uint32_t core = ecmp_pick(static_cast<uint32_t>(salted_flow_hash(h, agg) >> 32), 4);
    ++count[up][core];
    ++unsalted[ecmp_pick(h, 4)][ecmp_pick(h, 4)];
  }
  for (int a = 0; a < 4; ++a) {
    for (int b = 0; b < 4; ++b) {
      EXPECT_NEAR(count[a][b], kFlows / 16, kFlows / 16 * 0.05) << a << "," << b;
      if (a != b) EXPECT_EQ(unsalted[a][b], 0);  // what the salt prevents
    }
  }
}

}  // namespace
}  // namespace sluice
