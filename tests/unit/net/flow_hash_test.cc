#include "lib/net/flow_hash.h"

#include <gtest/gtest.h>

#include <array>
#include <random>

namespace sluice {
namespace {

// Vectors computed by a separate Python implementation of the formula in
// docs/packet-processing.md (the same one the integration tests use).
TEST(FlowHash, KnownVectors) {
  EXPECT_EQ(flow_hash(0x0A000001, 0x0A000102, 17, 12345, 80), 0xC82750CEu);
  EXPECT_EQ(flow_hash(0xC0A80001, 0xC0A800C7, 6, 8080, 53), 0xF330D9C4u);
  EXPECT_EQ(flow_hash(0x0A010005, 0x0A020007, 6, 49152, 5001), 0x2C9C1F35u);
  EXPECT_EQ(flow_hash(0xFFFFFFFF, 0xFFFFFFFF, 255, 65535, 65535), 0x6F699F54u);
  EXPECT_EQ(flow_hash(0, 0, 0, 0, 0), 0u);
  static_assert(flow_hash(0x0A000001, 0x0A000102, 17, 12345, 80) == 0xC82750CEu);
}

// The symmetric hash is the plain hash of the endpoints in order (lower
// address first, lower port first between equal addresses), so both
// directions of a flow get the same value.
TEST(FlowHash, SymmetricIsTheHashOfTheOrderedEndpoints) {
  EXPECT_EQ(symmetric_flow_hash(0x0A000001, 0x0A000102, 17, 12345, 80), 0xC82750CEu);
  EXPECT_EQ(symmetric_flow_hash(0x0A000102, 0x0A000001, 17, 80, 12345), 0xC82750CEu);
  EXPECT_EQ(symmetric_flow_hash(0xC0A800C7, 0xC0A80001, 6, 53, 8080), 0xF330D9C4u);
  // Equal addresses: the ports decide the order.
  EXPECT_EQ(symmetric_flow_hash(7, 7, 6, 9, 5), flow_hash(7, 7, 6, 5, 9));
  EXPECT_EQ(symmetric_flow_hash(7, 7, 6, 5, 9), flow_hash(7, 7, 6, 5, 9));
  std::mt19937 rng(3);
  for (int i = 0; i < 1000; ++i) {
    const uint32_t a = rng(), b = rng();
    const uint16_t pa = static_cast<uint16_t>(rng()), pb = static_cast<uint16_t>(rng());
    EXPECT_EQ(symmetric_flow_hash(a, b, 17, pa, pb), symmetric_flow_hash(b, a, 17, pb, pa));
  }
  // The plain hash tells the directions apart.
  EXPECT_NE(flow_hash(0x0A000001, 0x0A000102, 17, 12345, 80),
            flow_hash(0x0A000102, 0x0A000001, 17, 80, 12345));
}

TEST(FlowHash, Fmix64KnownValue) {
  // MurmurHash3 fmix64 of 1, computed in Python.
  EXPECT_EQ(fmix64(0), 0u);
  EXPECT_EQ(fmix64(1), 0xB456BCFC34C2CB2Cull);
}

TEST(FlowHash, EcmpPick) {
  EXPECT_EQ(ecmp_pick(0xC82750CEu, 2), 1u);
  EXPECT_EQ(ecmp_pick(0xC82750CEu, 3), 2u);
  EXPECT_EQ(ecmp_pick(0x2C9C1F35u, 4), 0u);
  EXPECT_EQ(ecmp_pick(0x6F699F54u, 3), 1u);
  for (uint32_t n : {1u, 2u, 3u, 7u, 64u, 65535u}) {
    EXPECT_EQ(ecmp_pick(0, n), 0u);
    EXPECT_EQ(ecmp_pick(0xFFFFFFFFu, n), n - 1);
    // Member i owns hashes from ceil(i * 2^32 / n).
    for (uint32_t i = 1; i < std::min(n, 8u); ++i) {
      const uint64_t first = ((uint64_t{i} << 32) + n - 1) / n;
      EXPECT_EQ(ecmp_pick(static_cast<uint32_t>(first), n), i);
      EXPECT_EQ(ecmp_pick(static_cast<uint32_t>(first - 1), n), i - 1);
    }
  }
}

struct Tuple {
  uint32_t src, dst;
  uint8_t proto;
  uint16_t sport, dport;
  uint32_t hash() const { return flow_hash(src, dst, proto, sport, dport); }
};

Tuple random_tuple(std::mt19937& rng) {
  return {static_cast<uint32_t>(rng()), static_cast<uint32_t>(rng()),
          static_cast<uint8_t>(rng() % 2 ? 6 : 17), static_cast<uint16_t>(rng()),
          static_cast<uint16_t>(rng())};
}

void expect_even(const std::vector<uint32_t>& hashes, uint32_t n) {
  std::array<uint32_t, 8> counts{};
  for (uint32_t h : hashes) counts[ecmp_pick(h, n)]++;
  const double expected = static_cast<double>(hashes.size()) / n;
  for (uint32_t i = 0; i < n; ++i) {
    EXPECT_NEAR(counts[i], expected, 0.05 * expected) << "member " << i << " of " << n;
  }
}

TEST(FlowHash, SpreadsRandomTuplesEvenly) {
  std::mt19937 rng(7);
  std::vector<uint32_t> hashes;
  for (int i = 0; i < 100000; ++i) hashes.push_back(random_tuple(rng).hash());
  for (uint32_t n : {2u, 3u, 4u, 5u, 8u}) expect_even(hashes, n);
}

// Testbed traffic is structured, not random: few hosts, sequential ports.
TEST(FlowHash, SpreadsStructuredTuplesEvenly) {
  std::vector<uint32_t> by_port, by_host;
  for (uint32_t p = 0; p < 100000; ++p) {
    by_port.push_back(flow_hash(0x0A000001, 0x0A000202, 6, static_cast<uint16_t>(1024 + p), 5001));
  }
  for (uint32_t s = 0; s < 400; ++s) {
    for (uint32_t d = 0; d < 250; ++d) {
      by_host.push_back(flow_hash(0x0A000000 | s, 0x0A010000 | d, 17, 4791, 4791));
    }
  }
  for (uint32_t n : {2u, 3u, 4u}) {
    expect_even(by_port, n);
    expect_even(by_host, n);
  }
}

TEST(FlowHash, Deterministic) {
  std::mt19937 rng(8);
  for (int i = 0; i < 1000; ++i) {
    Tuple t = random_tuple(rng);
    Tuple copy = t;
    EXPECT_EQ(t.hash(), copy.hash());
  }
}

// Flipping any single input bit changes the hash, and about half the output bits.
TEST(FlowHash, EveryFieldMattersAndAvalanches) {
  std::mt19937 rng(9);
  uint64_t flipped_bits = 0, trials = 0;
  for (int i = 0; i < 2000; ++i) {
    const Tuple t = random_tuple(rng);
    const uint32_t h = t.hash();
    for (int bit = 0; bit < 104; ++bit) {
      Tuple u = t;
      if (bit < 32)
        u.src ^= 1u << bit;
      else if (bit < 64)
        u.dst ^= 1u << (bit - 32);
      else if (bit < 72)
        u.proto ^= static_cast<uint8_t>(1u << (bit - 64));
      else if (bit < 88)
        u.sport ^= static_cast<uint16_t>(1u << (bit - 72));
      else
        u.dport ^= static_cast<uint16_t>(1u << (bit - 88));
      const uint32_t g = u.hash();
      ASSERT_NE(g, h) << "tuple " << i << " bit " << bit;
      flipped_bits += static_cast<uint64_t>(__builtin_popcount(g ^ h));
      ++trials;
    }
  }
  const double mean = static_cast<double>(flipped_bits) / static_cast<double>(trials);
  EXPECT_NEAR(mean, 16.0, 0.2);
}

TEST(FlowHash, DirectionMatters) {
  // The two directions of a connection are different flows (no symmetry).
  EXPECT_NE(flow_hash(0x0A000001, 0x0A000002, 6, 1000, 2000),
            flow_hash(0x0A000002, 0x0A000001, 6, 2000, 1000));
}

}  // namespace
}  // namespace sluice
