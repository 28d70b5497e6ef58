#include "lib/net/route_table.h"

#include <gtest/gtest.h>

#include <random>

namespace sluice {
namespace {

Ipv4Prefix prefix(uint32_t addr, uint8_t len) { return Ipv4Prefix{addr, len}; }

TEST(RouteTable, LongestPrefixWins) {
  RouteTable t;
  std::string err;
  ASSERT_TRUE(t.add(prefix(0x0A000000, 8), {1}, &err)) << err;   // 10/8
  ASSERT_TRUE(t.add(prefix(0x0A010000, 16), {2}, &err)) << err;  // 10.1/16
  ASSERT_TRUE(t.add(prefix(0x0A010200, 24), {3}, &err)) << err;  // 10.1.2/24
  ASSERT_TRUE(t.add(prefix(0x0A010203, 32), {4}, &err)) << err;  // 10.1.2.3/32
  auto port_of = [&](uint32_t ip) {
    int g = t.lookup(ip);
    return g < 0 ? -1 : t.group(g).ports.at(0);
  };
  EXPECT_EQ(port_of(0x0A010203), 4);  // 10.1.2.3
  EXPECT_EQ(port_of(0x0A010204), 3);  // 10.1.2.4
  EXPECT_EQ(port_of(0x0A0102FF), 3);
  EXPECT_EQ(port_of(0x0A010300), 2);   // 10.1.3.0
  EXPECT_EQ(port_of(0x0AFF0000), 1);   // 10.255.0.0
  EXPECT_EQ(port_of(0x0B000000), -1);  // 11.0.0.0: miss
  EXPECT_EQ(port_of(0x09FFFFFF), -1);
}

TEST(RouteTable, DefaultRoute) {
  RouteTable t;
  std::string err;
  EXPECT_EQ(t.lookup(0x08080808), -1);
  ASSERT_TRUE(t.add(prefix(0, 0), {5}, &err)) << err;
  ASSERT_TRUE(t.add(prefix(0xC0A80000, 16), {6}, &err)) << err;
  EXPECT_EQ(t.group(t.lookup(0x08080808)).ports, std::vector<uint16_t>{5});
  EXPECT_EQ(t.group(t.lookup(0xFFFFFFFF)).ports, std::vector<uint16_t>{5});
  EXPECT_EQ(t.group(t.lookup(0xC0A8FFFF)).ports, std::vector<uint16_t>{6});
}

TEST(RouteTable, GroupsAreSharedAndSorted) {
  RouteTable t;
  std::string err;
  ASSERT_TRUE(t.add(prefix(0x0A000000, 24), {3, 1, 2}, &err));
  ASSERT_TRUE(t.add(prefix(0x0A000100, 24), {2, 3, 1}, &err));
  ASSERT_TRUE(t.add(prefix(0x0A000200, 24), {1, 2}, &err));
  ASSERT_TRUE(t.add(prefix(0x0A000300, 24), {1}, &err));
  EXPECT_EQ(t.group_count(), 3u);
  EXPECT_EQ(t.lookup(0x0A000001), t.lookup(0x0A000101));
  EXPECT_NE(t.lookup(0x0A000001), t.lookup(0x0A000201));
  EXPECT_EQ(t.group(t.lookup(0x0A000101)).ports, (std::vector<uint16_t>{1, 2, 3}));
  ASSERT_EQ(t.entries().size(), 4u);
  EXPECT_EQ(t.entries()[1].prefix.addr, 0x0A000100u);
  EXPECT_EQ(t.entries()[1].group, t.entries()[0].group);
  EXPECT_EQ(t.entries()[3].prefix.len, 24);
}

TEST(RouteTable, RejectsBadRoutes) {
  RouteTable t;
  std::string err;
  ASSERT_TRUE(t.add(prefix(0x0A000000, 8), {1}, &err));
  EXPECT_FALSE(t.add(prefix(0x0A000000, 8), {2}, &err));
  EXPECT_NE(err.find("duplicate"), std::string::npos) << err;
  EXPECT_NE(err.find("10.0.0.0/8"), std::string::npos) << err;
  EXPECT_FALSE(t.add(prefix(0x0B000000, 8), {}, &err));
  EXPECT_FALSE(t.add(prefix(0x0B000000, 8), {1, 2, 1}, &err));
  EXPECT_FALSE(t.add(prefix(0x0B000001, 8), {1}, &err));
  EXPECT_NE(err.find("host bits"), std::string::npos) << err;
  EXPECT_FALSE(t.add(prefix(0x0B000000, 33), {1}, &err));
  // Failed adds leave nothing behind.
  EXPECT_EQ(t.entries().size(), 1u);
  EXPECT_EQ(t.group_count(), 1u);
  EXPECT_EQ(t.lookup(0x0B000000), -1);
  // Same address, different length is not a duplicate.
  EXPECT_TRUE(t.add(prefix(0x0A000000, 9), {2}, &err));
}

// Against a linear scan over the entries, written out here.
TEST(RouteTable, MatchesLinearScan) {
  std::mt19937 rng(11);
  RouteTable t;
  std::string err;
  for (int i = 0; i < 400; ++i) {
    uint8_t len = static_cast<uint8_t>(rng() % 33);
    uint32_t mask = len == 0 ? 0 : ~0u << (32 - len);
    // Few distinct high bits so prefixes nest.
    uint32_t addr = (0x0A000000 | (rng() & 0x0003030F)) & mask;
    std::vector<uint16_t> ports = {static_cast<uint16_t>(rng() % 6)};
    if (rng() % 3 == 0) ports.push_back(static_cast<uint16_t>(6 + rng() % 2));
    t.add(prefix(addr, len), ports, &err);  // duplicates are refused, fine
  }
  for (int i = 0; i < 20000; ++i) {
    uint32_t ip = (rng() % 4 == 0) ? static_cast<uint32_t>(rng())
                                   : (0x0A000000 | (static_cast<uint32_t>(rng()) & 0x0003030F));
    int best = -1, best_len = -1;
    for (const auto& e : t.entries()) {
      uint32_t mask = e.prefix.len == 0 ? 0 : ~0u << (32 - e.prefix.len);
      if ((ip & mask) == e.prefix.addr && e.prefix.len > best_len) {
        best = e.group;
        best_len = e.prefix.len;
      }
    }
    ASSERT_EQ(t.lookup(ip), best) << std::hex << ip;
  }
}

}  // namespace
}  // namespace sluice
