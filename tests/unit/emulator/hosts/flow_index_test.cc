#include "lib/emulator/hosts/flow_index.h"

#include <gtest/gtest.h>

#include <map>
#include <random>

namespace sluice {
namespace {

TEST(FlowIndex, EmptyFindsNothing) {
  FlowIndex none;
  EXPECT_EQ(none.find(0), FlowIndex::kNone);
  FlowIndex empty;
  empty.reserve(0);
  EXPECT_EQ(empty.find(7), FlowIndex::kNone);
}

TEST(FlowIndex, LastInsertOfAnIdWins) {
  FlowIndex f;
  f.reserve(2);
  f.insert(5, 0);
  f.insert(5, 3);
  f.insert(UINT32_MAX, 1);  // any id, the largest included
  EXPECT_EQ(f.find(5), 3u);
  EXPECT_EQ(f.find(UINT32_MAX), 1u);
  EXPECT_EQ(f.find(6), FlowIndex::kNone);
}

// Ids as a workload gives them to hosts (runs of neighbours, and scattered
// ones), full to the reserved count: the same answers as std::map, ids
// present and absent.
TEST(FlowIndex, MatchesAMap) {
  std::mt19937 rng(11);
  for (uint32_t n : {1u, 2u, 3u, 17u, 1000u, 4096u}) {
    FlowIndex f;
    f.reserve(n);
    std::map<uint32_t, uint32_t> ref;
    uint32_t id = rng() % 100;
    while (ref.size() < n) {
      id = rng() % 4 == 0 ? static_cast<uint32_t>(rng()) : id + 1 + rng() % 3;
      const uint32_t index = static_cast<uint32_t>(ref.size());
      if (ref.count(id)) continue;
      ref[id] = index;
      f.insert(id, index);
    }
    for (const auto& [k, v] : ref) ASSERT_EQ(f.find(k), v) << n;
    for (int i = 0; i < 10'000; ++i) {
      const uint32_t probe = static_cast<uint32_t>(rng());
      const auto it = ref.find(probe);
      ASSERT_EQ(f.find(probe), it == ref.end() ? FlowIndex::kNone : it->second) << n;
    }
  }
}

}  // namespace
}  // namespace sluice
