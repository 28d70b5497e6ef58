// PrefixTable: longest-prefix match by per-length hash tables, against the
// reference RouteTable on random route sets, and its edge cases.
#include "lib/net/prefix_table.h"

#include <gtest/gtest.h>

#include <random>

#include "lib/net/route_table.h"

namespace sluice {
namespace {

TEST(PrefixTable, EmptyTableHasNoRoute) {
  PrefixTable t;
  EXPECT_EQ(t.lookup(0x0A000001), PrefixTable::kNoRoute);
  EXPECT_EQ(t.size(), 0u);
}

TEST(PrefixTable, LongestPrefixWins) {
  PrefixTable t;
  t.add(0x0A000000, 8, 1);   // 10/8
  t.add(0x0A010000, 16, 2);  // 10.1/16
  t.add(0x0A010200, 24, 3);  // 10.1.2/24
  t.add(0x0A010203, 32, 4);  // 10.1.2.3/32
  EXPECT_EQ(t.lookup(0x0A010203), 4u);
  EXPECT_EQ(t.lookup(0x0A010204), 3u);
  EXPECT_EQ(t.lookup(0x0A010304), 2u);
  EXPECT_EQ(t.lookup(0x0A020304), 1u);
  EXPECT_EQ(t.lookup(0x0B000000), PrefixTable::kNoRoute);
  EXPECT_EQ(t.size(), 4u);
}

TEST(PrefixTable, HostBitsAreIgnoredAndAddReplaces) {
  PrefixTable t;
  t.add(0x0A0102FF, 24, 7);  // host bits set: 10.1.2/24
  EXPECT_EQ(t.lookup(0x0A010201), 7u);
  t.add(0x0A010200, 24, 9);  // the same prefix again: replaced
  EXPECT_EQ(t.lookup(0x0A010201), 9u);
  EXPECT_EQ(t.size(), 1u);
}

TEST(PrefixTable, ManyRoutesOfOneLengthGrowTheirTable) {
  PrefixTable t;
  for (uint32_t i = 0; i < 5000; ++i) t.add(0x0A000000 | (i << 8), 24, i);
  for (uint32_t i = 0; i < 5000; ++i) EXPECT_EQ(t.lookup(0x0A000000 | (i << 8) | 7), i);
  EXPECT_EQ(t.lookup(0x0B000001), PrefixTable::kNoRoute);
  EXPECT_EQ(t.size(), 5000u);
}

// Random route sets in a /8 (so lookups often hit), against the reference.
TEST(PrefixTable, AgreesWithTheReferenceOnRandomRoutes) {
  std::mt19937 rng(7);
  for (int round = 0; round < 40; ++round) {
    RouteTable ref;
    PrefixTable t;
    const int routes = 1 + static_cast<int>(rng() % 200);
    for (int r = 0; r < routes; ++r) {
      const uint8_t len = static_cast<uint8_t>(8 + rng() % 25);
      const uint32_t mask = len >= 32 ? ~0u : ~0u << (32 - len);
      const uint32_t addr = (0x0A000000 | (rng() & 0x00FFFFFF)) & mask;
      const uint16_t port = static_cast<uint16_t>(r);
      std::string err;
      if (!ref.add(Ipv4Prefix{addr, len}, {port}, &err)) continue;  // a duplicate prefix
      t.add(addr, len, static_cast<uint32_t>(ref.entries().back().group));
    }
    for (int q = 0; q < 2000; ++q) {
      const uint32_t addr = q % 4 == 0 ? static_cast<uint32_t>(rng())
                                       : 0x0A000000 | (rng() & 0x00FFFFFF);
      const int want = ref.lookup(addr);
      const uint32_t got = t.lookup(addr);
      if (want < 0) {
        EXPECT_EQ(got, PrefixTable::kNoRoute) << std::hex << addr;
      } else {
        EXPECT_EQ(got, static_cast<uint32_t>(want)) << std::hex << addr;
      }
    }
  }
}

}  // namespace
}  // namespace sluice
