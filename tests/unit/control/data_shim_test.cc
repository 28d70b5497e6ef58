#include "lib/control/data_shim.h"

#include <gtest/gtest.h>

#include <vector>

namespace sluice {
namespace {

TEST(ShimCodec, WriteBytes) {
  uint8_t b[6];
  write_shim(b, DataShim{0x0102, 3, 4, 0x0800});
  EXPECT_EQ(std::vector<uint8_t>(b, b + 6), (std::vector<uint8_t>{0x01, 0x02, 3, 4, 0x08, 0x00}));
  const DataShim s = read_shim(b);
  EXPECT_EQ(s.upstream_queue, 0x0102);
  EXPECT_EQ(s.shard, 3);
  EXPECT_EQ(s.detours, 4);
  EXPECT_EQ(s.inner_ethertype, 0x0800);
}

// DIBS's detour count is the whole byte, 0 to 255, and only that byte.
TEST(ShimCodec, DetourCountKeepsEveryValue) {
  for (unsigned d = 0; d <= 255; ++d) {
    uint8_t b[6];
    write_shim(b, DataShim{0xFFFF, 0xFF, uint8_t(d), 0xFFFF});
    EXPECT_EQ(b[3], d);
    const DataShim s = read_shim(b);
    EXPECT_EQ(s.detours, d);
    EXPECT_EQ(s.upstream_queue, 0xFFFF);
    EXPECT_EQ(s.shard, 0xFF);
    EXPECT_EQ(s.inner_ethertype, 0xFFFF);
  }
}

TEST(ShimCodec, ParseNeedsSixBytes) {
  const uint8_t b[6] = {0, 9, 1, 2, 0x08, 0x06};
  DataShim s{};
  for (uint32_t n = 0; n < 6; ++n) EXPECT_FALSE(parse_shim(b, n, &s)) << n;
  ASSERT_TRUE(parse_shim(b, 6, &s));
  EXPECT_EQ(s.upstream_queue, 9);
  EXPECT_EQ(s.inner_ethertype, 0x0806);
}

// An untagged IPv4 frame behind 6 bytes of headroom (0xEE).
std::vector<uint8_t> untagged_with_headroom() {
  return {0xEE, 0xEE, 0xEE, 0xEE, 0xEE, 0xEE,  // headroom
          1,    2,    3,    4,    5,    6,     // dst
          7,    8,    9,    10,   11,   12,    // src
          0x08, 0x00,                          // IPv4
          0x45, 0x00, 0x00, 0x14};             // start of the payload
}

TEST(ShimInsert, UntaggedBytes) {
  std::vector<uint8_t> f = untagged_with_headroom();
  insert_shim(f.data(), 12, DataShim{0x0203, 1, 0, 0xFFFF});  // inner type ignored
  EXPECT_EQ(f, (std::vector<uint8_t>{1,    2,    3,    4,   5,    6,    7, 8, 9, 10, 11, 12,  //
                                     0x88, 0xB6,                                              //
                                     0x02, 0x03, 1,    0,   0x08, 0x00,  // shim
                                     0x45, 0x00, 0x00, 0x14}));
}

TEST(ShimInsert, BehindVlanTag) {
  std::vector<uint8_t> f = {0xEE, 0xEE, 0xEE, 0xEE, 0xEE, 0xEE, 1,   2,  3,
                            4,    5,    6,    7,    8,    9,    10,  11, 12,
                            0x81, 0x00, 0x00, 0x05, 0x08, 0x06, 0xAA};
  insert_shim(f.data(), 16, DataShim{7, 2, 3, 0});
  EXPECT_EQ(f, (std::vector<uint8_t>{1,    2,    3,  4,    5,    6,    7,    8,    9,
                                     10,   11,   12, 0x81, 0x00, 0x00, 0x05, 0x88, 0xB6,
                                     0x00, 0x07, 2,  3,    0x08, 0x06, 0xAA}));
}

TEST(ShimStrip, RestoresOriginalFrame) {
  const std::vector<uint8_t> original = untagged_with_headroom();
  std::vector<uint8_t> f = original;
  insert_shim(f.data(), 12, DataShim{300, 5, 2, 0});
  DataShim s{};
  strip_shim(f.data(), 14, &s);
  EXPECT_EQ(s.upstream_queue, 300);
  EXPECT_EQ(s.shard, 5);
  EXPECT_EQ(s.detours, 2);
  EXPECT_EQ(s.inner_ethertype, 0x0800);
  // The frame now starts 6 bytes in and equals the original frame.
  EXPECT_EQ(std::vector<uint8_t>(f.begin() + 6, f.end()),
            std::vector<uint8_t>(original.begin() + 6, original.end()));
}

TEST(ShimStrip, CarriesASaturatedDetourCount) {
  std::vector<uint8_t> f = untagged_with_headroom();
  insert_shim(f.data(), 12, DataShim{0, 0, 255, 0});
  EXPECT_EQ(f[17], 255);  // after dst, src and 0x88B6: queue (2), shard (1), detours
  DataShim s{};
  strip_shim(f.data(), 14, &s);
  EXPECT_EQ(s.detours, 255);
}

TEST(ShimStrip, BehindVlanTag) {
  std::vector<uint8_t> f = {1,    2,    3,    4,    5,    6, 7, 8, 9, 10,   11,   12,  0x81,
                            0x00, 0x00, 0x05, 0x88, 0xB6, 0, 7, 2, 3, 0x08, 0x06, 0xAA};
  DataShim s{};
  strip_shim(f.data(), 18, &s);
  EXPECT_EQ(s.upstream_queue, 7);
  EXPECT_EQ(std::vector<uint8_t>(f.begin() + 6, f.end()),
            (std::vector<uint8_t>{1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 0x81, 0x00, 0x00, 0x05,
                                  0x08, 0x06, 0xAA}));
}

}  // namespace
}  // namespace sluice
