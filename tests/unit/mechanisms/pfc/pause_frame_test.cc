#include "lib/mechanisms/pfc/pause_frame.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <initializer_list>
#include <vector>

namespace sluice {
namespace {

constexpr MacAddr kSrc = {0x02, 0x00, 0x00, 0x00, 0x00, 0x01};

// A 60-byte frame: `head`, then zero padding.
std::vector<uint8_t> padded(std::initializer_list<uint8_t> head) {
  std::vector<uint8_t> f(60, 0x00);
  std::copy(head.begin(), head.end(), f.begin());
  return f;
}

// Hand-written from the 802.3 Annex 31B / 31D layouts: DA, SA, type 8808,
// opcode, operands, zero padding to 60 bytes.
std::vector<uint8_t> expected_pause_ffff() {
  return padded({0x01, 0x80, 0xC2, 0x00, 0x00, 0x01,  // DA
                 0x02, 0x00, 0x00, 0x00, 0x00, 0x01,  // SA
                 0x88, 0x08,                          // MAC Control
                 0x00, 0x01,                          // PAUSE
                 0xFF, 0xFF});                        // pause_time
}

std::vector<uint8_t> expected_pfc_0_and_3() {
  return padded({0x01, 0x80, 0xC2, 0x00, 0x00, 0x01,                // DA
                 0x02, 0x00, 0x00, 0x00, 0x00, 0x01,                // SA
                 0x88, 0x08,                                        // MAC Control
                 0x01, 0x01,                                        // PFC
                 0x00, 0x09,                                        // e[0], e[3]
                 0x12, 0x34, 0x00, 0x00, 0x00, 0x00, 0xAB, 0xCD,    // time[0..3]
                 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00});  // time[4..7]
}

TEST(PauseFrame, PauseBytesMatchTheStandardLayout) {
  std::vector<uint8_t> out(64, 0xEE);
  ASSERT_EQ(build_pause_frame(out.data(), 64, kSrc, 0xFFFF), 60u);
  for (int i = 60; i < 64; ++i) EXPECT_EQ(out[i], 0xEE) << i;  // nothing past 60
  out.resize(60);
  EXPECT_EQ(out, expected_pause_ffff());
}

TEST(PauseFrame, PfcBytesMatchTheStandardLayout) {
  std::vector<uint8_t> out(60, 0xEE);
  // time[5] is not enabled: it goes out as zero.
  std::array<uint16_t, 8> q = {0x1234, 0, 0, 0xABCD, 0, 0x5555, 0, 0};
  ASSERT_EQ(build_pfc_frame(out.data(), 60, kSrc, 0x09, q), 60u);
  EXPECT_EQ(out, expected_pfc_0_and_3());
}

TEST(PauseFrame, BuildersRefuseSmallBuffers) {
  std::vector<uint8_t> out(59, 0xEE);
  EXPECT_EQ(build_pause_frame(out.data(), 59, kSrc, 1), 0u);
  EXPECT_EQ(build_pfc_frame(out.data(), 59, kSrc, 1, {}), 0u);
  for (uint8_t b : out) EXPECT_EQ(b, 0xEE);
}

TEST(PauseFrame, ParsesHandWrittenPause) {
  std::vector<uint8_t> f = expected_pause_ffff();
  f[16] = 0x01;  // pause_time 0x0102
  f[17] = 0x02;
  MacControlFrame m;
  ASSERT_TRUE(parse_mac_control(f.data() + 14, 46, &m));
  EXPECT_EQ(m.opcode, 0x0001);
  EXPECT_TRUE(m.is_pause());
  EXPECT_EQ(m.class_enable, 0xFF);  // the whole port
  for (uint16_t q : m.quanta) EXPECT_EQ(q, 0x0102);
}

TEST(PauseFrame, ParsesHandWrittenPfcAndIgnoresReservedOctet) {
  std::vector<uint8_t> f = expected_pfc_0_and_3();
  f[16] = 0xA5;  // reserved high octet of the enable vector
  MacControlFrame m;
  ASSERT_TRUE(parse_mac_control(f.data() + 14, 46, &m));
  EXPECT_EQ(m.opcode, 0x0101);
  EXPECT_FALSE(m.is_pause());
  EXPECT_EQ(m.class_enable, 0x09);
  std::array<uint16_t, 8> want = {0x1234, 0, 0, 0xABCD, 0, 0, 0, 0};
  EXPECT_EQ(m.quanta, want);
}

TEST(PauseFrame, RoundTrip) {
  std::array<uint16_t, 8> q = {1, 2, 3, 4, 5, 6, 7, 0xFFFF};
  uint8_t buf[60];
  ASSERT_EQ(build_pfc_frame(buf, 60, kSrc, 0xFF, q), 60u);
  MacControlFrame m;
  ASSERT_TRUE(parse_mac_control(buf + 14, 46, &m));
  EXPECT_EQ(m.class_enable, 0xFF);
  EXPECT_EQ(m.quanta, q);
  ASSERT_EQ(build_pause_frame(buf, 60, kSrc, 777), 60u);
  ASSERT_TRUE(parse_mac_control(buf + 14, 46, &m));
  EXPECT_TRUE(m.is_pause());
  EXPECT_EQ(m.quanta[0], 777);
  EXPECT_EQ(m.quanta[7], 777);
}

TEST(PauseFrame, ShortBodiesAreRefused) {
  std::vector<uint8_t> pfc = expected_pfc_0_and_3();
  std::vector<uint8_t> pause = expected_pause_ffff();
  MacControlFrame m;
  EXPECT_FALSE(parse_mac_control(pfc.data() + 14, 0, &m));
  EXPECT_FALSE(parse_mac_control(pfc.data() + 14, 1, &m));
  EXPECT_FALSE(parse_mac_control(pfc.data() + 14, 19, &m));  // time[7] cut
  EXPECT_TRUE(parse_mac_control(pfc.data() + 14, 20, &m));
  EXPECT_FALSE(parse_mac_control(pause.data() + 14, 3, &m));
  EXPECT_TRUE(parse_mac_control(pause.data() + 14, 4, &m));
}

TEST(PauseFrame, UnknownOpcodesAreRefused) {
  std::vector<uint8_t> f = expected_pause_ffff();
  MacControlFrame m;
  for (uint16_t op : {0x0000, 0x0002, 0x0100, 0x0102, 0xFFFF}) {
    f[14] = static_cast<uint8_t>(op >> 8);
    f[15] = static_cast<uint8_t>(op);
    EXPECT_FALSE(parse_mac_control(f.data() + 14, 46, &m)) << op;
  }
}

TEST(PauseFrame, DestinationCheck) {
  const MacAddr port = {0x02, 0, 0, 0, 0, 0x09};
  const uint8_t reserved[6] = {0x01, 0x80, 0xC2, 0x00, 0x00, 0x01};
  const uint8_t other_reserved[6] = {0x01, 0x80, 0xC2, 0x00, 0x00, 0x02};
  const uint8_t unicast[6] = {0x02, 0, 0, 0, 0, 0x09};
  const uint8_t someone_else[6] = {0x02, 0, 0, 0, 0, 0x0A};
  EXPECT_TRUE(mac_control_dst_ok(reserved, port));
  EXPECT_TRUE(mac_control_dst_ok(unicast, port));
  EXPECT_FALSE(mac_control_dst_ok(other_reserved, port));
  EXPECT_FALSE(mac_control_dst_ok(someone_else, port));
}

}  // namespace
}  // namespace sluice
