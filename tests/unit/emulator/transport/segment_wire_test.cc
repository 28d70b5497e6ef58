#include "lib/emulator/transport/segment_wire.h"

#include <gtest/gtest.h>

#include <cstring>
#include <vector>

#include "lib/net/byte_order.h"
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

std::vector<uint8_t> from_hex(const char* hex) {
  std::vector<uint8_t> out;
  for (const char* c = hex; c[0] != 0 && c[1] != 0; c += 2) {
    auto nibble = [](char x) { return static_cast<uint8_t>(x <= '9' ? x - '0' : x - 'a' + 10); };
    out.push_back(static_cast<uint8_t>(nibble(c[0]) << 4 | nibble(c[1])));
  }
  return out;
}

// Frames without a rank or SACK block are byte for byte what the format was
// before those options existed: the bytes below were written from the
// table in docs/wire-formats.md, not by this encoder.
TEST(SegmentWire, FramesWithoutOptionsKeepTheirBytes) {
  Segment s;
  s.kind = SegmentKind::kData;
  s.flow = 77;
  s.seq = 123456;
  s.bytes = 10;
  s.ts_ns = 0x0102030405060708ull;
  std::vector<uint8_t> buf(256, 0xEE);
  uint32_t len = encode_segment(s, addrs(), buf.data(), buf.size());
  buf.resize(len);
  EXPECT_EQ(buf, from_hex("1011121314152021222324250800450e0042000040004011259a0a0000020a000102"
                          "c04d2329002e0000534c5431010000000000004d0001e2400000000a010203040506"
                          "070800000000000000000000"));
  Segment a;
  a.kind = SegmentKind::kAck;
  a.flow = 5;
  a.seq = 4000;
  a.ece = true;
  a.ue_echo = true;
  a.ts_ns = 0x1122334455667788ull;
  buf.assign(256, 0xEE);
  len = encode_segment(a, addrs(), buf.data(), buf.size());
  buf.resize(len);
  EXPECT_EQ(buf, from_hex("1011121314152021222324250800450c003800004000401125a60a0000020a000102"
                          "2329c00500240000534c5431020300000000000500000fa0000000001122334455"
                          "667788"));
}

TEST(SegmentWire, RankFollowsTheHeaderAndGrowsTheFrameByFour) {
  Segment s;
  s.kind = SegmentKind::kData;
  s.flow = 77;
  s.seq = 123456;
  s.bytes = 10;
  s.ts_ns = 0x0102030405060708ull;
  s.has_rank = true;
  s.rank = 999000;
  EXPECT_EQ(segment_frame_bytes(s), 84u);
  EXPECT_EQ(segment_header_bytes(false, true), 74u);
  std::vector<uint8_t> buf(256, 0xEE);
  const uint32_t len = encode_segment(s, addrs(), buf.data(), buf.size());
  buf.resize(len);
  // Flags 0x08, then the rank 999000 = 0x000f3e58 at UDP payload offset 28.
  EXPECT_EQ(buf, from_hex("1011121314152021222324250800450e004600004000401125960a0000020a000102"
                          "c04d232900320000534c5431010800000000004d0001e2400000000a010203040506"
                          "0708000f3e5800000000000000000000"));
  Segment d;
  ASSERT_TRUE(decode_segment(buf.data(), len, &d));
  EXPECT_TRUE(d.has_rank);
  EXPECT_EQ(d.rank, 999000u);
  EXPECT_FALSE(d.has_sack);
  EXPECT_EQ(d.bytes, 10u);
  uint32_t rank = 0;
  ASSERT_TRUE(slt_rank(buf.data() + 14, len - 14, &rank));
  EXPECT_EQ(rank, 999000u);
}

TEST(SegmentWire, AckCarriesRankAndSackBlock) {
  Segment a;
  a.kind = SegmentKind::kAck;
  a.flow = 9;
  a.seq = 3000;
  a.ts_ns = 42;
  a.has_rank = true;
  a.rank = 0;
  a.has_sack = true;
  a.sack_start = 5000;
  a.sack_end = 6000;
  std::vector<uint8_t> buf(256, 0xEE);
  const uint32_t len = encode_segment(a, addrs(), buf.data(), buf.size());
  EXPECT_EQ(len, 70u + 4 + 8);
  EXPECT_EQ(buf[42 + 5], kSltFlagRank | kSltFlagSack);
  EXPECT_EQ(load_be32(buf.data() + 70), 0u);
  EXPECT_EQ(load_be32(buf.data() + 74), 5000u);
  EXPECT_EQ(load_be32(buf.data() + 78), 6000u);
  Segment d;
  ASSERT_TRUE(decode_segment(buf.data(), len, &d));
  EXPECT_EQ(d.kind, SegmentKind::kAck);
  EXPECT_TRUE(d.has_rank);
  EXPECT_EQ(d.rank, 0u);
  EXPECT_TRUE(d.has_sack);
  EXPECT_EQ(d.sack_start, 5000u);
  EXPECT_EQ(d.sack_end, 6000u);
  EXPECT_EQ(d.seq, 3000u);
  uint32_t rank = 7;
  ASSERT_TRUE(slt_rank(buf.data() + 14, len - 14, &rank));
  EXPECT_EQ(rank, 0u);
  // A SACK block alone sits right after the fixed header.
  a.has_rank = false;
  ASSERT_EQ(encode_segment(a, addrs(), buf.data(), buf.size()), 78u);
  EXPECT_EQ(load_be32(buf.data() + 70), 5000u);
  ASSERT_TRUE(decode_segment(buf.data(), 78, &d));
  EXPECT_FALSE(d.has_rank);
  EXPECT_EQ(d.sack_end, 6000u);
  EXPECT_FALSE(slt_rank(buf.data() + 14, 78 - 14, &rank));
}

TEST(SegmentWire, RankReaderRefusesWhatIsNotARankedTransportFrame) {
  Segment s;
  s.kind = SegmentKind::kData;
  s.bytes = 100;
  std::vector<uint8_t> buf(512, 0);
  uint32_t len = encode_segment(s, addrs(), buf.data(), buf.size());
  uint32_t rank = 123;
  EXPECT_FALSE(slt_rank(buf.data() + 14, len - 14, &rank));  // no rank
  EXPECT_EQ(rank, 123u);
  s.has_rank = true;
  s.rank = 0xA1B2C3D4;
  len = encode_segment(s, addrs(), buf.data(), buf.size());
  const uint8_t* l3 = buf.data() + 14;
  ASSERT_TRUE(slt_rank(l3, len - 14, &rank));
  EXPECT_EQ(rank, 0xA1B2C3D4u);
  // Every length short of the rank's last byte is refused.
  for (uint32_t cut = 0; cut < 20 + 8 + 28 + 4; ++cut)
    EXPECT_FALSE(slt_rank(l3, cut, &rank)) << cut;
  EXPECT_TRUE(slt_rank(l3, 20 + 8 + 28 + 4, &rank));
  std::vector<uint8_t> other = buf;
  other[14 + 20 + 2] = 0x24;  // not to port 9001
  EXPECT_FALSE(slt_rank(other.data() + 14, len - 14, &rank));
  other = buf;
  other[14 + 9] = 6;  // TCP
  EXPECT_FALSE(slt_rank(other.data() + 14, len - 14, &rank));
  other = buf;
  other[42] = 'X';  // magic
  EXPECT_FALSE(slt_rank(other.data() + 14, len - 14, &rank));
  other = buf;
  other[42 + 4] = 7;  // kind
  EXPECT_FALSE(slt_rank(other.data() + 14, len - 14, &rank));
}

TEST(SegmentWire, DecodeRefusesUnknownFlagsAndShortOptions) {
  Segment s;
  s.kind = SegmentKind::kAck;
  s.has_rank = true;
  s.has_sack = true;
  std::vector<uint8_t> buf(256);
  const uint32_t len = encode_segment(s, addrs(), buf.data(), buf.size());
  ASSERT_EQ(len, 82u);
  Segment d;
  for (uint32_t cut = 0; cut < 82; ++cut) EXPECT_FALSE(decode_segment(buf.data(), cut, &d)) << cut;
  ASSERT_TRUE(decode_segment(buf.data(), len, &d));
  for (uint8_t bit : {32, 64, 128}) {
    buf[42 + 5] = static_cast<uint8_t>(kSltFlagRank | kSltFlagSack | bit);
    EXPECT_FALSE(decode_segment(buf.data(), len, &d)) << int{bit};
  }
}

// INT records go after the options: a frame with a rank and INT room is
// stamped past its rank, which stays as sent.
TEST(SegmentWire, IntRoomFollowsTheOptions) {
  Segment s;
  s.kind = SegmentKind::kData;
  s.flow = 3;
  s.bytes = 100;
  s.int_request = true;
  s.has_rank = true;
  s.rank = 77777;
  std::vector<uint8_t> buf(512);
  const uint32_t len = encode_segment(s, addrs(), buf.data(), buf.size());
  ASSERT_EQ(len, 42u + 28 + 4 + 80 + 100);
  uint8_t* l3 = buf.data() + 14;
  EXPECT_EQ(stamp_int(l3, len - 14, IntHop{11, 22, 33, 44}), IntStamp::kStamped);
  EXPECT_EQ(stamp_int(l3, len - 14, IntHop{55, 66, 77, 88}), IntStamp::kStamped);
  EXPECT_EQ(load_be32(buf.data() + 74), 11u);  // first record right after the rank
  Segment d;
  ASSERT_TRUE(decode_segment(buf.data(), len, &d));
  EXPECT_EQ(d.rank, 77777u);
  ASSERT_EQ(d.int_hops, 2u);
  EXPECT_EQ(d.hops[0].qlen_bytes, 33u);
  EXPECT_EQ(d.hops[1].ts_ns, 55u);
  EXPECT_EQ(d.hops[1].rate_mbps, 88u);
  // Too short for its room behind the options: left alone.
  EXPECT_EQ(stamp_int(l3, len - 14 - 100 - 4, IntHop{}), IntStamp::kNotAsked);
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
