#include "lib/net/arp.h"

#include <gtest/gtest.h>

#include <vector>

#include "lib/net/packet_parser.h"

namespace sluice {
namespace {

const MacAddr kSwitchMac = {0x02, 0x00, 0x00, 0x00, 0x00, 0x0a};
const MacAddr kHostMac = {0x52, 0x54, 0x00, 0x12, 0x34, 0x56};

// Who has 10.0.0.1? Tell 10.0.0.254 — written out byte by byte.
const std::vector<uint8_t> kRequestFrame = {
    0xff, 0xff, 0xff, 0xff, 0xff, 0xff,  // dst: broadcast
    0x02, 0x00, 0x00, 0x00, 0x00, 0x0a,  // src: switch port
    0x08, 0x06,                          // ARP
    0x00, 0x01, 0x08, 0x00, 0x06, 0x04,  // Ethernet, IPv4, hlen 6, plen 4
    0x00, 0x01,                          // request
    0x02, 0x00, 0x00, 0x00, 0x00, 0x0a,  // sha
    0x0a, 0x00, 0x00, 0xfe,              // spa 10.0.0.254
    0x00, 0x00, 0x00, 0x00, 0x00, 0x00,  // tha: unknown
    0x0a, 0x00, 0x00, 0x01,              // tpa 10.0.0.1
    0,    0,    0,    0,    0,    0,    0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0};  // padding to 60

// 10.0.0.254 is at 02:00:00:00:00:0a, to 10.0.0.1 at 52:54:00:12:34:56.
const std::vector<uint8_t> kReplyFrame = {
    0x52, 0x54, 0x00, 0x12, 0x34, 0x56, 0x02, 0x00, 0x00, 0x00, 0x00, 0x0a, 0x08, 0x06, 0x00,
    0x01, 0x08, 0x00, 0x06, 0x04, 0x00, 0x02, 0x02, 0x00, 0x00, 0x00, 0x00, 0x0a, 0x0a, 0x00,
    0x00, 0xfe, 0x52, 0x54, 0x00, 0x12, 0x34, 0x56, 0x0a, 0x00, 0x00, 0x01, 0,    0,    0,
    0,    0,    0,    0,    0,    0,    0,    0,    0,    0,    0,    0,    0,    0,    0};

TEST(Arp, BuildsRequestBytes) {
  std::vector<uint8_t> out(128, 0xAA);
  uint32_t n = build_arp_frame(out.data(), 128, kArpOpRequest, kSwitchMac, kBroadcastMac,
                               0x0A0000FE, kZeroMac, 0x0A000001);
  ASSERT_EQ(n, 60u);
  out.resize(n);
  EXPECT_EQ(out, kRequestFrame);
}

TEST(Arp, BuildsReplyBytes) {
  std::vector<uint8_t> out(60, 0xAA);
  uint32_t n = build_arp_frame(out.data(), 60, kArpOpReply, kSwitchMac, kHostMac, 0x0A0000FE,
                               kHostMac, 0x0A000001);
  ASSERT_EQ(n, 60u);
  EXPECT_EQ(out, kReplyFrame);
}

TEST(Arp, RefusesSmallBuffer) {
  std::vector<uint8_t> out(59, 0xAA);
  EXPECT_EQ(
      build_arp_frame(out.data(), 59, kArpOpRequest, kSwitchMac, kBroadcastMac, 1, kZeroMac, 2),
      0u);
  EXPECT_EQ(out, std::vector<uint8_t>(59, 0xAA));  // untouched
}

TEST(Arp, ParsesHandWrittenFrames) {
  ArpMessage m{};
  ASSERT_TRUE(parse_arp(kRequestFrame.data() + 14, 46, &m));
  EXPECT_EQ(m.op, kArpOpRequest);
  EXPECT_EQ(m.sha, kSwitchMac);
  EXPECT_EQ(m.spa, 0x0A0000FEu);
  EXPECT_EQ(m.tha, kZeroMac);
  EXPECT_EQ(m.tpa, 0x0A000001u);

  ASSERT_TRUE(parse_arp(kReplyFrame.data() + 14, 28, &m));
  EXPECT_EQ(m.op, kArpOpReply);
  EXPECT_EQ(m.sha, kSwitchMac);
  EXPECT_EQ(m.tha, kHostMac);
  EXPECT_EQ(m.tpa, 0x0A000001u);
}

TEST(Arp, RoundTrip) {
  const MacAddr a = {0x0e, 0x1f, 0x2a, 0x3b, 0x4c, 0x5d};
  const MacAddr b = {0xfe, 0xdc, 0xba, 0x98, 0x76, 0x54};
  uint8_t frame[60];
  ASSERT_EQ(build_arp_frame(frame, 60, kArpOpReply, a, b, 0xC0A80101, b, 0xC0A80102), 60u);
  ParsedPacket p;
  parse_packet(frame, 60, &p);
  ASSERT_EQ(p.kind, PacketKind::kArp);
  ArpMessage m{};
  ASSERT_TRUE(parse_arp(frame + p.l3_offset, 60 - p.l3_offset, &m));
  EXPECT_EQ(m.op, kArpOpReply);
  EXPECT_EQ(m.sha, a);
  EXPECT_EQ(m.spa, 0xC0A80101u);
  EXPECT_EQ(m.tha, b);
  EXPECT_EQ(m.tpa, 0xC0A80102u);
}

TEST(Arp, RejectsOtherArp) {
  ArpMessage m{};
  EXPECT_FALSE(parse_arp(kRequestFrame.data() + 14, 27, &m));  // short
  for (auto [index, value] :
       std::initializer_list<std::pair<size_t, uint8_t>>{{1, 6},     // htype IEEE 802
                                                         {2, 0x86},  // ptype
                                                         {4, 8},     // hlen
                                                         {5, 16},    // plen
                                                         {7, 0},     // op 0
                                                         {7, 3},     // op 3 (RARP request)
                                                         {6, 1}}) {  // op 0x0101
    std::vector<uint8_t> body(kRequestFrame.begin() + 14, kRequestFrame.end());
    body[index] = value;
    EXPECT_FALSE(parse_arp(body.data(), static_cast<uint32_t>(body.size()), &m)) << index;
  }
}

}  // namespace
}  // namespace sluice
