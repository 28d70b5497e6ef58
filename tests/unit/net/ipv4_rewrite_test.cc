#include "lib/net/ipv4_rewrite.h"

#include <gtest/gtest.h>

#include <random>

#include "tests/unit/net/test_frames.h"

namespace sluice {
namespace {

using test::Bytes;
using test::reference_checksum;

uint16_t stored_checksum(const Bytes& h) { return static_cast<uint16_t>(h[10] << 8 | h[11]); }

void store_checksum(Bytes& h, uint16_t c) {
  h[10] = static_cast<uint8_t>(c >> 8);
  h[11] = static_cast<uint8_t>(c);
}

// Checksum over the header with the checksum field taken as zero.
uint16_t recompute(Bytes h) {
  store_checksum(h, 0);
  return reference_checksum(h.data(), static_cast<unsigned>(h.size()));
}

// A random but well-formed header of ihl_bytes with a correct checksum.
Bytes random_header(std::mt19937& rng, unsigned ihl_bytes) {
  Bytes h(ihl_bytes);
  for (auto& b : h) b = static_cast<uint8_t>(rng());
  h[0] = static_cast<uint8_t>(0x40 | ihl_bytes / 4);
  store_checksum(h, recompute(h));
  return h;
}

// One's complement sum (folded, 16 bits) of the header's words except the
// checksum, computed with the reference loop.
uint16_t sum_without_checksum(Bytes h) {
  store_checksum(h, 0);
  return static_cast<uint16_t>(~reference_checksum(h.data(), static_cast<unsigned>(h.size())));
}

TEST(Ipv4Checksum, KnownHeader) {
  const Bytes h = {0x45, 0x00, 0x00, 0x73, 0x00, 0x00, 0x40, 0x00, 0x40, 0x11,
                   0xb8, 0x61, 0xc0, 0xa8, 0x00, 0x01, 0xc0, 0xa8, 0x00, 0xc7};
  EXPECT_EQ(ipv4_header_checksum(h.data(), 20), 0xb861);
  EXPECT_TRUE(ipv4_checksum_ok(h.data(), 20));
  Bytes wrong = h;
  wrong[15] ^= 0x10;
  EXPECT_FALSE(ipv4_checksum_ok(wrong.data(), 20));
  EXPECT_EQ(ipv4_header_checksum(wrong.data(), 20), 0xb851);
}

TEST(Ipv4Checksum, FullMatchesReferenceOnRandomHeaders) {
  std::mt19937 rng(1);
  for (int i = 0; i < 20000; ++i) {
    const unsigned ihl = 20 + 4 * (rng() % 11);
    Bytes h = random_header(rng, ihl);
    ASSERT_TRUE(ipv4_checksum_ok(h.data(), ihl));
    const uint16_t good = stored_checksum(h);
    store_checksum(h, static_cast<uint16_t>(rng()));  // the field is ignored
    ASSERT_EQ(ipv4_header_checksum(h.data(), ihl), good);
    ASSERT_EQ(ipv4_checksum_ok(h.data(), ihl), stored_checksum(h) == good);
  }
}

TEST(Ipv4Rewrite, DecrementTtlMatchesRecomputation) {
  std::mt19937 rng(2);
  for (int i = 0; i < 100000; ++i) {
    const unsigned ihl = 20 + 4 * (rng() % 11);
    Bytes h = random_header(rng, ihl);
    if (h[8] < 2) continue;
    const Bytes before = h;
    ipv4_decrement_ttl(h.data());
    ASSERT_EQ(h[8], before[8] - 1);
    ASSERT_EQ(stored_checksum(h), recompute(h)) << i;
    h[8] = before[8];
    h[10] = before[10];
    h[11] = before[11];
    ASSERT_EQ(h, before);  // nothing else touched
  }
}

// RFC 1624's corner: when the other words sum to 0xFFFF (-0), the correct
// checksum is 0x0000; eqn. 2 would produce 0xFFFF instead.
TEST(Ipv4Rewrite, DecrementTtlChecksumZeroCorners) {
  std::mt19937 rng(3);
  for (int i = 0; i < 2000; ++i) {
    Bytes h = random_header(rng, 20);
    h[8] = static_cast<uint8_t>(2 + rng() % 254);
    // Choose the ID so that after the decrement the other words sum to 0xFFFF.
    Bytes after = h;
    after[8] = static_cast<uint8_t>(after[8] - 1);
    after[4] = after[5] = 0;
    const uint16_t id = static_cast<uint16_t>(0xFFFF - sum_without_checksum(after));
    h[4] = static_cast<uint8_t>(id >> 8);
    h[5] = static_cast<uint8_t>(id);
    store_checksum(h, recompute(h));
    ipv4_decrement_ttl(h.data());
    ASSERT_EQ(recompute(h), 0x0000);
    ASSERT_EQ(stored_checksum(h), 0x0000);

    // And the other direction: a checksum of 0x0000 before the decrement.
    Bytes g = random_header(rng, 20);
    g[8] = static_cast<uint8_t>(2 + rng() % 254);
    g[4] = g[5] = 0;
    const uint16_t id2 = static_cast<uint16_t>(0xFFFF - sum_without_checksum(g));
    g[4] = static_cast<uint8_t>(id2 >> 8);
    g[5] = static_cast<uint8_t>(id2);
    store_checksum(g, recompute(g));
    ASSERT_EQ(stored_checksum(g), 0x0000);
    ipv4_decrement_ttl(g.data());
    ASSERT_EQ(stored_checksum(g), recompute(g));
    ASSERT_NE(stored_checksum(g), 0xFFFF);
  }
}

TEST(Ipv4Rewrite, DecrementTtlKnownHeader) {
  Bytes h = {0x45, 0x00, 0x00, 0x73, 0x00, 0x00, 0x40, 0x00, 0x40, 0x11,
             0xb8, 0x61, 0xc0, 0xa8, 0x00, 0x01, 0xc0, 0xa8, 0x00, 0xc7};
  ipv4_decrement_ttl(h.data());
  EXPECT_EQ(h[8], 0x3f);
  EXPECT_EQ(stored_checksum(h), 0xb961);  // the TTL word fell by 0x0100
}

TEST(Ipv4Rewrite, EcnReadAndCapable) {
  Bytes h = {0x45, 0xB8, 0, 20, 0, 0, 0, 0, 64, 6, 0, 0, 10, 0, 0, 1, 10, 0, 0, 2};
  EXPECT_EQ(ipv4_ecn(h.data()), 0);
  EXPECT_FALSE(ipv4_ecn_capable(h.data()));
  for (uint8_t e : {1, 2, 3}) {
    h[1] = static_cast<uint8_t>(0xB8 | e);
    EXPECT_EQ(ipv4_ecn(h.data()), e);
    EXPECT_TRUE(ipv4_ecn_capable(h.data()));
  }
}

TEST(Ipv4Rewrite, SetEcnEveryTransition) {
  std::mt19937 rng(4);
  for (int i = 0; i < 20000; ++i) {
    const unsigned ihl = 20 + 4 * (rng() % 11);
    Bytes h = random_header(rng, ihl);
    const uint8_t from = h[1] & 3;
    const uint8_t to = static_cast<uint8_t>(rng() % 4);
    const Bytes before = h;
    ipv4_set_ecn(h.data(), to);
    ASSERT_EQ(h[1], (before[1] & 0xFC) | to);
    ASSERT_EQ(ipv4_ecn(h.data()), to);
    ASSERT_EQ(h[0], before[0]);
    ASSERT_EQ(stored_checksum(h), recompute(h)) << int(from) << "->" << int(to);
  }
}

TEST(Ipv4Rewrite, SetEcnIgnoresHighBitsOfArgument) {
  Bytes h = {0x45, 0x00, 0, 20, 0, 0, 0, 0, 64, 6, 0, 0, 10, 0, 0, 1, 10, 0, 0, 2};
  store_checksum(h, recompute(h));
  ipv4_set_ecn(h.data(), 0xFF);
  EXPECT_EQ(h[1], 0x03);
  EXPECT_EQ(h[0], 0x45);
  EXPECT_EQ(stored_checksum(h), recompute(h));
}

TEST(Ipv4Rewrite, SetEcnCornerChecksums) {
  // Headers whose checksum becomes 0x0000 when CE is set.
  std::mt19937 rng(5);
  for (int i = 0; i < 2000; ++i) {
    Bytes h = random_header(rng, 20);
    h[1] &= 0xFC;  // Not-ECT
    Bytes after = h;
    after[1] |= 3;
    after[4] = after[5] = 0;
    const uint16_t id = static_cast<uint16_t>(0xFFFF - sum_without_checksum(after));
    h[4] = static_cast<uint8_t>(id >> 8);
    h[5] = static_cast<uint8_t>(id);
    store_checksum(h, recompute(h));
    ipv4_set_ecn(h.data(), kEcnCe);
    ASSERT_EQ(stored_checksum(h), 0x0000);
    ASSERT_EQ(recompute(h), 0x0000);
  }
}

}  // namespace
}  // namespace sluice
