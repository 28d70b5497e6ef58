#include "lib/control/control_intake.h"

#include <gtest/gtest.h>

#include <cstring>
#include <memory>
#include <vector>

namespace sluice {
namespace {

constexpr MacAddr kPortMac = {0x02, 0x00, 0x00, 0x00, 0x00, 0x0A};
constexpr MacAddr kPeerMac = {0x02, 0x00, 0x00, 0x00, 0x00, 0x0B};
constexpr uint32_t kEth = 14;

std::vector<uint8_t> pause_frame(uint8_t shard = 1, uint16_t queue = 9,
                                 const MacAddr& dst = kPortMac) {
  std::vector<uint8_t> f(128);
  f.resize(build_bfc_pause(f.data(), static_cast<uint32_t>(f.size()), dst, kPeerMac, shard, queue));
  return f;
}

std::vector<uint8_t> bitmap_frame(uint16_t queue_count, const uint64_t* words) {
  std::vector<uint8_t> f(512);
  f.resize(build_bfc_bitmap(f.data(), static_cast<uint32_t>(f.size()), kPortMac, kPeerMac, 2, words,
                            queue_count));
  return f;
}

DropReason check(const std::vector<uint8_t>& f, PortRole role = PortRole::kSwitch,
                 ControlMessage* msg = nullptr, uint32_t payload_offset = kEth) {
  ControlMessage scratch{};
  return check_control_frame(f.data(), static_cast<uint32_t>(f.size()), payload_offset, role,
                             kPortMac, msg ? msg : &scratch);
}

TEST(ControlIntake, AcceptsAFrameOnASwitchPortAddressedToIt) {
  const std::vector<uint8_t> f = pause_frame(1, 9);
  ASSERT_EQ(f.size(), 60u);
  ControlMessage m{};
  EXPECT_EQ(check(f, PortRole::kSwitch, &m), DropReason::kCount);
  EXPECT_EQ(m.type, ControlType::kBfcPause);
  EXPECT_EQ(m.shard, 1);
  EXPECT_EQ(m.queue(), 9);

  std::vector<uint8_t> r(60);
  ASSERT_EQ(build_bfc_resume(r.data(), 60, kPortMac, kPeerMac, 0, 63), 60u);
  EXPECT_EQ(check(r, PortRole::kSwitch, &m), DropReason::kCount);
  EXPECT_EQ(m.type, ControlType::kBfcResume);
  EXPECT_EQ(m.queue(), 63);

  const uint64_t words[1] = {0b1000'0001};
  const std::vector<uint8_t> b = bitmap_frame(20, words);  // m points into it
  EXPECT_EQ(check(b, PortRole::kSwitch, &m), DropReason::kCount);
  EXPECT_EQ(m.type, ControlType::kBfcBitmap);
  EXPECT_EQ(m.count, 20);
  EXPECT_TRUE(m.queue_paused(0));
  EXPECT_TRUE(m.queue_paused(7));
  EXPECT_FALSE(m.queue_paused(1));
}

TEST(ControlIntake, AcceptsAfterAVlanTag) {
  // dst, src, 0x8100 + TCI, then 0x88B5 and the control header at 18.
  const std::vector<uint8_t> plain = pause_frame(0, 4);
  std::vector<uint8_t> f(plain.begin(), plain.begin() + 12);
  const uint8_t tag[] = {0x81, 0x00, 0x00, 0x05};
  f.insert(f.end(), tag, tag + 4);
  f.insert(f.end(), plain.begin() + 12, plain.end());
  ControlMessage m{};
  EXPECT_EQ(check(f, PortRole::kSwitch, &m, 18), DropReason::kCount);
  EXPECT_EQ(m.queue(), 4);
}

TEST(ControlIntake, HostFacingPortIsNeverTrusted) {
  // A perfect frame, spoofed by a host.
  EXPECT_EQ(check(pause_frame(), PortRole::kHost), DropReason::kControlFromHost);
  // Whatever else is wrong with it.
  std::vector<uint8_t> bad = pause_frame(0, 0, kPeerMac);
  bad[kEth] = 'X';
  EXPECT_EQ(check(bad, PortRole::kHost), DropReason::kControlFromHost);
  EXPECT_EQ(check(std::vector<uint8_t>(3), PortRole::kHost), DropReason::kControlFromHost);
}

TEST(ControlIntake, OtherDestinationIsRejected) {
  EXPECT_EQ(check(pause_frame(1, 9, kPeerMac)), DropReason::kControlBadDestination);
  MacAddr first = kPortMac;
  first[0] ^= 0x01;  // the group bit: a multicast look-alike
  EXPECT_EQ(check(pause_frame(1, 9, first)), DropReason::kControlBadDestination);
  const MacAddr bcast = {0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF};
  EXPECT_EQ(check(pause_frame(1, 9, bcast)), DropReason::kControlBadDestination);
}

// Every prefix of a valid frame, copied into a heap block of exactly its
// length so that AddressSanitizer reports any read past it. The frame is
// complete once it holds 14 (Ethernet) + 8 (header) + body bytes; the rest is
// padding.
void check_every_truncation(const std::vector<uint8_t>& f, uint32_t complete_len) {
  for (uint32_t len = 0; len <= f.size(); ++len) {
    std::unique_ptr<uint8_t[]> copy(new uint8_t[len]);
    if (len != 0) std::memcpy(copy.get(), f.data(), len);
    ControlMessage m{};
    const DropReason got =
        check_control_frame(copy.get(), len, kEth, PortRole::kSwitch, kPortMac, &m);
    EXPECT_EQ(got, len >= complete_len ? DropReason::kCount : DropReason::kControlMalformed)
        << "len " << len;
  }
}

TEST(ControlIntake, EveryTruncationIsMalformedUntilTheBodyIsComplete) {
  check_every_truncation(pause_frame(), kEth + 8 + 2);
  const uint64_t words[1] = {0x5};
  check_every_truncation(bitmap_frame(20, words), kEth + 8 + 2 + 3);  // ceil(20 / 8) = 3
  uint64_t wide[16] = {};
  wide[15] = uint64_t{1} << 63;
  const std::vector<uint8_t> big = bitmap_frame(1024, wide);
  ASSERT_EQ(big.size(), kEth + 8 + 2 + 128u);
  check_every_truncation(big, static_cast<uint32_t>(big.size()));
}

TEST(ControlIntake, PayloadOffsetBeyondTheFrameIsMalformed) {
  const std::vector<uint8_t> f = pause_frame();
  EXPECT_EQ(check(f, PortRole::kSwitch, nullptr, 61), DropReason::kControlMalformed);
  EXPECT_EQ(check(f, PortRole::kSwitch, nullptr, 60), DropReason::kControlMalformed);
}

TEST(ControlIntake, BadMagicIsMalformed) {
  for (uint32_t i : {kEth, kEth + 1}) {
    std::vector<uint8_t> f = pause_frame();
    f[i] = 'X';
    EXPECT_EQ(check(f), DropReason::kControlMalformed) << i;
  }
}

TEST(ControlIntake, BodyLengthNotMatchingTheTypeIsMalformed) {
  std::vector<uint8_t> f = pause_frame();
  f[kEth + 5] = 3;  // BFC_PAUSE body is 2 bytes
  EXPECT_EQ(check(f), DropReason::kControlMalformed);
  f[kEth + 4] = 0x01;  // 259: beyond the frame
  EXPECT_EQ(check(f), DropReason::kControlMalformed);
}

TEST(ControlIntake, OtherVersionsAreCountedApart) {
  for (uint8_t v : {0, 2, 255}) {
    std::vector<uint8_t> f = pause_frame();
    f[kEth + 2] = v;
    EXPECT_EQ(check(f), DropReason::kControlBadVersion) << int{v};
  }
}

TEST(ControlIntake, UnknownTypesAreCountedApart) {
  for (uint8_t t : {0, 7, 255}) {
    std::vector<uint8_t> f = pause_frame();
    f[kEth + 3] = t;
    EXPECT_EQ(check(f), DropReason::kControlUnknownType) << int{t};
  }
}

}  // namespace
}  // namespace sluice
