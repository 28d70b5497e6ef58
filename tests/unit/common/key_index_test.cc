// KeyIndex: find, insert and erase against a reference map through long
// churn (removals shift entries back, so nothing is lost and probes stay
// short), a full table refusing, and keys of every shape (0, all ones).
#include "lib/common/key_index.h"

#include <gtest/gtest.h>

#include <map>

#include "lib/common/xorshift.h"

namespace sluice {
namespace {

TEST(KeyIndex, FindsWhatWasInsertedAndNothingElse) {
  KeyIndex k(4);
  EXPECT_EQ(k.find(7), KeyIndex::kAbsent);
  EXPECT_TRUE(k.insert(7, 70));
  EXPECT_TRUE(k.insert(0, 1));
  EXPECT_TRUE(k.insert(UINT64_MAX, 2));
  EXPECT_FALSE(k.insert(7, 71));  // present: unchanged
  EXPECT_EQ(k.find(7), 70u);
  EXPECT_EQ(k.find(0), 1u);
  EXPECT_EQ(k.find(UINT64_MAX), 2u);
  EXPECT_EQ(k.size(), 3u);
}

TEST(KeyIndex, RefusesBeyondItsCapacityAndTakesAgainAfterErase) {
  KeyIndex k(3);
  for (uint64_t i = 0; i < 3; ++i) EXPECT_TRUE(k.insert(i * 1000, uint32_t(i)));
  EXPECT_FALSE(k.insert(5, 5));
  EXPECT_TRUE(k.erase(1000));
  EXPECT_FALSE(k.erase(1000));
  EXPECT_TRUE(k.insert(5, 5));
  EXPECT_EQ(k.find(5), 5u);
  EXPECT_EQ(k.find(2000), 2u);
}

TEST(KeyIndex, ChurnMatchesAReferenceMap) {
  KeyIndex k(64);
  std::map<uint64_t, uint32_t> ref;
  Xorshift64 rng(42);
  for (uint32_t round = 0; round < 200'000; ++round) {
    // Few distinct keys, so that inserts, hits and removals all happen and
    // clusters form and break up.
    const uint64_t key = (rng.next() % 100) * 0x100000001ULL;
    if (rng.next() % 2 == 0) {
      const bool room = ref.size() < 64;
      const bool fresh = ref.count(key) == 0;
      EXPECT_EQ(k.insert(key, round), room && fresh);
      if (room && fresh) ref[key] = round;
    } else {
      EXPECT_EQ(k.erase(key), ref.erase(key) == 1);
    }
    ASSERT_EQ(k.size(), ref.size());
    if (round % 997 == 0) {
      for (uint64_t probe = 0; probe < 100; ++probe) {
        const uint64_t key2 = probe * 0x100000001ULL;
        const auto it = ref.find(key2);
        ASSERT_EQ(k.find(key2), it == ref.end() ? KeyIndex::kAbsent : it->second) << round;
      }
    }
  }
}

}  // namespace
}  // namespace sluice
