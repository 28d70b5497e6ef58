#include "lib/emulator/transport/segment_wire.h"

#include <gtest/gtest.h>

#include <cstring>
#include <vector>

#include "lib/net/ipv4_rewrite.h"
#include "lib/net/packet_parser.h"
#include "lib/mechanisms/int/int_stamp.h"

namespace sluice {
namespace {

FrameAddrs addrs() {
  FrameAddrs a{};
  for (int i = 0; i < 6; ++i) {
    a.dst_mac[i] = static_cast<uint8_t>(0x10 + i);
    a.src_mac[i] = static_cast<uint8_t>(0x20 + i);
  }
  a.src_ip = 0x0A000002;
  a.dst_ip = 0x0A000102;
  a.dscp = 3;
  return a;
}

TEST(SegmentWire, DataRoundTripsAndParsesAsUdp) {
  Segment s;
  s.kind = SegmentKind::kData;
  s.flow = 77;
  s.seq = 123456;
  s.bytes = 1000;
  s.ts_ns = 0x0102030405060708ull;
  std::vector<uint8_t> buf(2048, 0xAB);
  const uint32_t len = encode_segment(s, addrs(), buf.data(), buf.size());
  // 14 + 20 + 8 + 28 + 1000
  ASSERT_EQ(len, 1070u);
  EXPECT_EQ(segment_frame_bytes(s), 1070u);
  ParsedPacket pp;
  parse_packet(buf.data(), len, &pp);
  ASSERT_EQ(pp.kind, PacketKind::kIpv4);
  EXPECT_EQ(pp.src_ip, 0x0A000002u);
  EXPECT_EQ(pp.dst_ip, 0x0A000102u);
  EXPECT_EQ(pp.proto, 17);
  EXPECT_EQ(pp.dst_port, kTransportUdpPort);
  EXPECT_EQ(pp.tos, (3 << 2) | kEcnEct0);  // data is ECT(0)
  EXPECT_EQ(pp.ip_total_len, 1056);
  EXPECT_EQ(buf[14 + 8], 64);  // TTL: FrameAddrs' default
  // The payload is zeros.
  for (uint32_t i = 70; i < len; ++i) ASSERT_EQ(buf[i], 0) << i;
  Segment d;
  uint32_t src = 0, dst = 0;
  ASSERT_TRUE(decode_segment(buf.data(), len, &d, &src, &dst));
  EXPECT_EQ(d.kind, SegmentKind::kData);
  EXPECT_EQ(d.flow, 77u);
  EXPECT_EQ(d.seq, 123456u);
  EXPECT_EQ(d.bytes, 1000u);
  EXPECT_EQ(d.ts_ns, 0x0102030405060708ull);
  EXPECT_EQ(d.ecn, kEcnEct0);
  EXPECT_FALSE(d.int_request);
  EXPECT_EQ(src, 0x0A000002u);
  EXPECT_EQ(dst, 0x0A000102u);
}

TEST(SegmentWire, TtlIsTheHostsAndTheChecksumCoversIt) {
  Segment s;
  s.kind = SegmentKind::kData;
  s.bytes = 100;
  FrameAddrs a = addrs();
  a.ttl = 255;
  std::vector<uint8_t> buf(2048, 0);
  const uint32_t len = encode_segment(s, a, buf.data(), buf.size());
  ASSERT_GT(len, 34u);
  EXPECT_EQ(buf[14 + 8], 255);
  EXPECT_TRUE(ipv4_checksum_ok(buf.data() + 14, 20));
}

TEST(SegmentWire, RepliesAreNotEctAndPadded) {
  Segment s;
  s.kind = SegmentKind::kAck;
  s.flow = 5;
  s.seq = 4000;
  s.ece = true;
  s.ue_echo = true;
  std::vector<uint8_t> buf(256);
  const uint32_t len = encode_segment(s, addrs(), buf.data(), buf.size());
  EXPECT_EQ(len, 70u);  // 42 + 28: above the 60-byte minimum
  EXPECT_EQ(buf[15] & 3, kEcnNotEct);
  Segment d;
  ASSERT_TRUE(decode_segment(buf.data(), len, &d));
  EXPECT_EQ(d.kind, SegmentKind::kAck);
  EXPECT_TRUE(d.ece);
  EXPECT_TRUE(d.ue_echo);
  EXPECT_EQ(d.seq, 4000u);
}

TEST(SegmentWire, SwitchesStampIntHopsInOrder) {
  Segment s;
  s.kind = SegmentKind::kData;
  s.flow = 1;
  s.bytes = 100;
  s.int_request = true;
  std::vector<uint8_t> buf(512);
  const uint32_t len = encode_segment(s, addrs(), buf.data(), buf.size());
  ASSERT_EQ(len, 42u + 28 + 80 + 100);
  uint8_t* l3 = buf.data() + 14;
  for (uint32_t h = 0; h < kMaxIntHops; ++h) {
    IntHop hop{1000 + h, (1ull << 32) + 7 * h, 100 * h, 100000};
    EXPECT_EQ(stamp_int(l3, len - 14, hop), IntStamp::kStamped);
  }
  EXPECT_EQ(stamp_int(l3, len - 14, IntHop{}), IntStamp::kFull);
  Segment d;
  ASSERT_TRUE(decode_segment(buf.data(), len, &d));
  ASSERT_EQ(d.int_hops, kMaxIntHops);
  EXPECT_TRUE(d.int_request);
  EXPECT_EQ(d.hops[2].ts_ns, 1002u);
  EXPECT_EQ(d.hops[2].tx_bytes, 14u);  // 2^32 + 14 wraps to 14
  EXPECT_EQ(d.hops[2].qlen_bytes, 200u);
  EXPECT_EQ(d.hops[2].rate_mbps, 100000u);
  // Differences across the wrap come out right.
  EXPECT_EQ(int_delta(5, 0xFFFFFFFEull), 7u);
}

TEST(SegmentWire, StampLeavesOtherFramesAlone) {
  Segment s;
  s.kind = SegmentKind::kData;
  s.bytes = 1000;  // no INT asked
  std::vector<uint8_t> buf(2048);
  const uint32_t len = encode_segment(s, addrs(), buf.data(), buf.size());
  std::vector<uint8_t> copy = buf;
  EXPECT_EQ(stamp_int(buf.data() + 14, len - 14, IntHop{1, 2, 3, 4}), IntStamp::kNotAsked);
  EXPECT_EQ(copy, buf);
  // A UDP frame to another port with the same bytes is not ours either.
  buf[14 + 20 + 2] = 0x24;  // 9001 is 0x2329
  EXPECT_FALSE(decode_segment(buf.data(), len, &s));
}

TEST(SegmentWire, DecodeRefusesMalformed) {
  Segment s;
  s.kind = SegmentKind::kAck;
  std::vector<uint8_t> buf(256);
  const uint32_t len = encode_segment(s, addrs(), buf.data(), buf.size());
  Segment d;
  for (uint32_t cut = 0; cut < 70; ++cut) EXPECT_FALSE(decode_segment(buf.data(), cut, &d));
  EXPECT_TRUE(decode_segment(buf.data(), len, &d));
  buf[42 + 4] = 9;  // unknown kind
  EXPECT_FALSE(decode_segment(buf.data(), len, &d));
  buf[42 + 4] = 2;
  buf[42 + 6] = 3;  // hops without INT room
  EXPECT_FALSE(decode_segment(buf.data(), len, &d));
  EXPECT_EQ(encode_segment(s, addrs(), buf.data(), 10), 0u);
}

TEST(SegmentWire, Ipv4OffsetSkipsTagsAndShim) {
  uint8_t f[64] = {};
  f[12] = 0x08;
  EXPECT_EQ(ipv4_offset(f, 64), 14u);
  f[12] = 0x81;  // VLAN, then IPv4
  f[13] = 0x00;
  f[16] = 0x08;
  EXPECT_EQ(ipv4_offset(f, 64), 18u);
  f[16] = 0x88;  // VLAN, shim (6 bytes, ethertype last), IPv4
  f[17] = 0xB6;
  f[22] = 0x08;
  f[23] = 0x00;
  EXPECT_EQ(ipv4_offset(f, 64), 24u);
  f[22] = 0x86;  // IPv6 inside: not ours
  f[23] = 0xDD;
  EXPECT_EQ(ipv4_offset(f, 64), 0u);
  EXPECT_EQ(ipv4_offset(f, 10), 0u);
}

}  // namespace
}  // namespace sluice
