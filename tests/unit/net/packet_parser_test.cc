#include "lib/net/packet_parser.h"

#include <gtest/gtest.h>

#include <memory>

#include "tests/unit/net/test_frames.h"

namespace sluice {
namespace {

using test::Bytes;
using test::cat;
using test::ethernet;
using test::ipv4;
using test::Ipv4Fields;
using test::shim;

// Parses the first `len` bytes of `frame` from an exactly-sized heap copy, so
// AddressSanitizer catches any read at or past the end.
ParsedPacket parse_prefix(const Bytes& frame, size_t len) {
  std::unique_ptr<uint8_t[]> buf(new uint8_t[len]);
  std::copy(frame.begin(), frame.begin() + static_cast<ptrdiff_t>(len), buf.get());
  ParsedPacket p;
  parse_packet(buf.get(), static_cast<uint32_t>(len), &p);
  return p;
}

ParsedPacket parse(const Bytes& frame) { return parse_prefix(frame, frame.size()); }

void expect_drop(const Bytes& frame, DropReason reason) {
  ParsedPacket p = parse(frame);
  EXPECT_EQ(p.kind, PacketKind::kDrop);
  EXPECT_EQ(drop_reason_name(p.drop), drop_reason_name(reason));
}

Bytes ipv4_frame(const Ipv4Fields& f) { return cat({ethernet(0x0800), ipv4(f)}); }

// Ethernet/IPv4 ARP request: who has 10.0.0.254, tell 10.0.0.1.
Bytes arp_body() {
  return {0x00, 0x01, 0x08, 0x00, 0x06, 0x04, 0x00, 0x01, 0x02, 0x00, 0x00, 0x00, 0x00, 0x01,
          0x0a, 0x00, 0x00, 0x01, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x0a, 0x00, 0x00, 0xfe};
}

TEST(PacketParser, KnownIpv4Header) {
  // A textbook header with checksum 0xb861: 192.168.0.1 -> 192.168.0.199, UDP,
  // total length 115.
  Bytes ip = {0x45, 0x00, 0x00, 0x73, 0x00, 0x00, 0x40, 0x00, 0x40, 0x11,
              0xb8, 0x61, 0xc0, 0xa8, 0x00, 0x01, 0xc0, 0xa8, 0x00, 0xc7};
  Bytes udp = {0x1f, 0x90, 0x00, 0x35};
  udp.resize(95, 0x5a);
  ParsedPacket p = parse(cat({ethernet(0x0800), ip, udp}));
  ASSERT_EQ(p.kind, PacketKind::kIpv4);
  EXPECT_EQ(p.l3_offset, 14);
  EXPECT_EQ(p.ethertype, 0x0800);
  EXPECT_FALSE(p.has_vlan);
  EXPECT_FALSE(p.has_shim);
  EXPECT_EQ(p.src_ip, 0xC0A80001u);
  EXPECT_EQ(p.dst_ip, 0xC0A800C7u);
  EXPECT_EQ(p.proto, 17);
  EXPECT_EQ(p.ttl, 64);
  EXPECT_EQ(p.tos, 0);
  EXPECT_EQ(p.ihl_bytes, 20);
  EXPECT_EQ(p.ip_total_len, 115);
  EXPECT_FALSE(p.is_fragment);
  EXPECT_EQ(p.src_port, 8080);
  EXPECT_EQ(p.dst_port, 53);
  ip[11] = 0x62;  // one bit of the checksum wrong
  expect_drop(cat({ethernet(0x0800), ip, udp}), DropReason::kBadIpChecksum);
}

TEST(PacketParser, TcpPortsAndTos) {
  Ipv4Fields f;
  f.proto = 6;
  f.tos = 0xB9;  // DSCP 46, ECT(1)
  f.payload = {0xC0, 0x01, 0x01, 0xBB, 0, 0, 0, 1, 0, 0, 0, 0, 0x50, 0x02, 0xff, 0xff, 0, 0, 0, 0};
  ParsedPacket p = parse(ipv4_frame(f));
  ASSERT_EQ(p.kind, PacketKind::kIpv4);
  EXPECT_EQ(p.proto, 6);
  EXPECT_EQ(p.tos, 0xB9);
  EXPECT_EQ(p.src_port, 0xC001);
  EXPECT_EQ(p.dst_port, 443);
}

TEST(PacketParser, OtherProtocolsHaveNoPorts) {
  Ipv4Fields f;
  f.proto = 1;  // ICMP echo
  f.payload = {8, 0, 0xf7, 0xff, 0, 0, 0, 0};
  ParsedPacket p = parse(ipv4_frame(f));
  ASSERT_EQ(p.kind, PacketKind::kIpv4);
  EXPECT_EQ(p.src_port, 0);
  EXPECT_EQ(p.dst_port, 0);
}

TEST(PacketParser, UdpWithoutRoomForPortsIsForwardedWithoutPorts) {
  Ipv4Fields f;
  f.payload = {0x30, 0x39, 0x00};  // 3 bytes: ports do not fit
  ParsedPacket p = parse(ipv4_frame(f));
  ASSERT_EQ(p.kind, PacketKind::kIpv4);
  EXPECT_EQ(p.src_port, 0);
  EXPECT_EQ(p.dst_port, 0);
}

TEST(PacketParser, OptionsArePassedOverForPorts) {
  Ipv4Fields f;
  f.options = {0x94, 0x04, 0x00, 0x00, 0x01, 0x01, 0x01, 0x00};  // router alert, NOPs, EOL
  ParsedPacket p = parse(ipv4_frame(f));
  ASSERT_EQ(p.kind, PacketKind::kIpv4);
  EXPECT_EQ(p.ihl_bytes, 28);
  EXPECT_EQ(p.ip_total_len, 28 + 12);
  EXPECT_EQ(p.src_port, 12345);
  EXPECT_EQ(p.dst_port, 80);
}

TEST(PacketParser, LargestHeaderWithOptions) {
  Ipv4Fields f;
  f.options.assign(40, 0x01);  // IHL 15
  ParsedPacket p = parse(ipv4_frame(f));
  ASSERT_EQ(p.kind, PacketKind::kIpv4);
  EXPECT_EQ(p.ihl_bytes, 60);
  EXPECT_EQ(p.src_port, 12345);
}

TEST(PacketParser, FragmentsAreForwardedWithoutPorts) {
  for (uint16_t frag :
       {0x2000 /* MF, first */, 0x2001 /* MF, offset 8 */, 0x00B9 /* last */, 0x6000 /* DF|MF */}) {
    Ipv4Fields f;
    f.frag = frag;
    ParsedPacket p = parse(ipv4_frame(f));
    ASSERT_EQ(p.kind, PacketKind::kIpv4) << frag;
    EXPECT_TRUE(p.is_fragment) << frag;
    EXPECT_EQ(p.src_port, 0) << frag;
    EXPECT_EQ(p.dst_port, 0) << frag;
  }
  for (uint16_t frag : {0x0000, 0x4000, 0x8000 /* reserved bit */}) {
    Ipv4Fields f;
    f.frag = frag;
    ParsedPacket p = parse(ipv4_frame(f));
    ASSERT_EQ(p.kind, PacketKind::kIpv4) << frag;
    EXPECT_FALSE(p.is_fragment) << frag;
    EXPECT_EQ(p.src_port, 12345) << frag;
  }
}

TEST(PacketParser, EthernetPaddingIsAllowed) {
  Ipv4Fields f;
  f.payload = {0x30, 0x39, 0x00, 0x50, 0x00, 0x08, 0x00, 0x00};  // UDP header only
  Bytes frame = ipv4_frame(f);
  ASSERT_EQ(frame.size(), 42u);
  frame.resize(60, 0);
  ParsedPacket p = parse(frame);
  ASSERT_EQ(p.kind, PacketKind::kIpv4);
  EXPECT_EQ(p.ip_total_len, 28);
  EXPECT_EQ(p.src_port, 12345);
}

TEST(PacketParser, VlanTag) {
  ParsedPacket p = parse(cat({ethernet(0x0800, {{0x8100, 0x6064}}), ipv4({})}));
  ASSERT_EQ(p.kind, PacketKind::kIpv4);
  EXPECT_TRUE(p.has_vlan);
  EXPECT_EQ(p.vlan_tci, 0x6064);  // PCP 3, VID 100
  EXPECT_EQ(p.l3_offset, 18);
  EXPECT_EQ(p.src_port, 12345);
}

TEST(PacketParser, QinQReportsOuterTag) {
  for (uint16_t outer : {0x88A8, 0x8100}) {
    ParsedPacket p = parse(cat({ethernet(0x0800, {{outer, 0xA00A}, {0x8100, 0x0014}}), ipv4({})}));
    ASSERT_EQ(p.kind, PacketKind::kIpv4);
    EXPECT_TRUE(p.has_vlan);
    EXPECT_EQ(p.vlan_tci, 0xA00A);
    EXPECT_EQ(p.l3_offset, 22);
    EXPECT_EQ(p.dst_ip, 0x0A000102u);
  }
}

TEST(PacketParser, ThirdTagIsUnknown) {
  expect_drop(cat({ethernet(0x0800, {{0x88A8, 1}, {0x8100, 2}, {0x8100, 3}}), ipv4({})}),
              DropReason::kUnknownEthertype);
}

TEST(PacketParser, SluiceDataShim) {
  ParsedPacket p = parse(cat({ethernet(0x88B6), shim(7, 1, 2, 0x0800), ipv4({})}));
  ASSERT_EQ(p.kind, PacketKind::kIpv4);
  EXPECT_TRUE(p.has_shim);
  EXPECT_EQ(p.shim_offset, 14);
  EXPECT_EQ(p.l3_offset, 20);
  EXPECT_EQ(p.ethertype, 0x0800);
  EXPECT_EQ(p.src_port, 12345);

  p = parse(cat({ethernet(0x88B6, {{0x8100, 5}}), shim(7, 1, 2, 0x0806), arp_body()}));
  ASSERT_EQ(p.kind, PacketKind::kArp);
  EXPECT_TRUE(p.has_vlan);
  EXPECT_EQ(p.shim_offset, 18);
  EXPECT_EQ(p.l3_offset, 24);

  expect_drop(cat({ethernet(0x88B6), shim(7, 1, 2, 0x88B6), shim(7, 1, 2, 0x0800), ipv4({})}),
              DropReason::kUnknownEthertype);
}

TEST(PacketParser, ControlKinds) {
  Bytes pfc = cat({ethernet(0x8808), {0x01, 0x01, 0x00, 0x01, 0xff, 0xff}});
  pfc.resize(60, 0);
  ParsedPacket p = parse(pfc);
  EXPECT_EQ(p.kind, PacketKind::kMacControl);
  EXPECT_EQ(p.l3_offset, 14);
  EXPECT_EQ(p.ethertype, 0x8808);

  p = parse(cat({ethernet(0x88B5, {{0x8100, 0}}), {'S', 'L', 1, 3, 0, 2, 0, 0, 0, 9}}));
  EXPECT_EQ(p.kind, PacketKind::kSluiceControl);
  EXPECT_EQ(p.l3_offset, 18);
}

TEST(PacketParser, Arp) {
  ParsedPacket p = parse(cat({ethernet(0x0806), arp_body()}));
  EXPECT_EQ(p.kind, PacketKind::kArp);
  EXPECT_EQ(p.l3_offset, 14);
  // Each fixed field wrong in turn: htype, ptype, hlen, plen, op 0 and 3.
  for (auto [index, value] : std::initializer_list<std::pair<int, uint8_t>>{
           {1, 6}, {2, 0x86}, {4, 8}, {5, 16}, {7, 0}, {7, 3}}) {
    Bytes body = arp_body();
    body[static_cast<size_t>(index)] = value;
    expect_drop(cat({ethernet(0x0806), body}), DropReason::kBadArp);
  }
  Bytes reply = arp_body();
  reply[7] = 2;
  EXPECT_EQ(parse(cat({ethernet(0x0806), reply})).kind, PacketKind::kArp);
  Bytes short_arp = arp_body();
  short_arp.pop_back();
  expect_drop(cat({ethernet(0x0806), short_arp}), DropReason::kTruncated);
}

TEST(PacketParser, Ipv6) {
  Bytes ip6(40, 0);
  ip6[0] = 0x60;
  ParsedPacket p = parse(cat({ethernet(0x86DD), ip6}));
  EXPECT_EQ(p.kind, PacketKind::kIpv6);
  EXPECT_EQ(p.drop, DropReason::kIpv6);
  EXPECT_EQ(p.l3_offset, 14);
  ip6.pop_back();
  expect_drop(cat({ethernet(0x86DD), ip6}), DropReason::kTruncated);
}

TEST(PacketParser, RuntAndUnknown) {
  expect_drop({}, DropReason::kRunt);
  expect_drop(Bytes(13, 0x08), DropReason::kRunt);
  Bytes frame = ethernet(0x9000);  // loopback protocol
  frame.resize(60, 0);
  expect_drop(frame, DropReason::kUnknownEthertype);
  expect_drop(ethernet(0x0000), DropReason::kUnknownEthertype);
}

TEST(PacketParser, Ipv4HeaderErrors) {
  Bytes frame = ipv4_frame({});
  frame[14] = 0x65;  // version 6, IHL 5
  expect_drop(frame, DropReason::kBadIpVersion);
  frame[14] = 0x44;  // version 4, IHL 4
  expect_drop(frame, DropReason::kBadIhl);
  frame[14] = 0x40;
  expect_drop(frame, DropReason::kBadIhl);
  frame[14] = 0x4F;  // IHL 15 = 60 bytes, frame holds 32
  expect_drop(frame, DropReason::kTruncated);

  Ipv4Fields f;
  f.total_len_override = 19;
  expect_drop(ipv4_frame(f), DropReason::kBadIpLength);
  f.options = {1, 1, 1, 1};
  f.total_len_override = 23;  // less than the 24-byte header
  expect_drop(ipv4_frame(f), DropReason::kBadIpLength);
  f.options.clear();
  f.total_len_override = 33;  // one more than the 32 bytes present
  expect_drop(ipv4_frame(f), DropReason::kBadIpLength);
  f.total_len_override = 32;
  EXPECT_EQ(parse(ipv4_frame(f)).kind, PacketKind::kIpv4);

  Ipv4Fields bad;
  bad.bad_checksum = true;
  expect_drop(ipv4_frame(bad), DropReason::kBadIpChecksum);
}

TEST(PacketParser, TtlExpired) {
  for (uint8_t ttl : {0, 1}) {
    Ipv4Fields f;
    f.ttl = ttl;
    ParsedPacket p = parse(ipv4_frame(f));
    EXPECT_EQ(p.kind, PacketKind::kDrop);
    EXPECT_EQ(p.drop, DropReason::kTtlExpired);
    EXPECT_EQ(p.ttl, ttl);
  }
  Ipv4Fields f;
  f.ttl = 2;
  EXPECT_EQ(parse(ipv4_frame(f)).kind, PacketKind::kIpv4);
}

TEST(PacketParser, Martians) {
  struct Case {
    uint32_t src, dst;
    bool martian;
  };
  const Case cases[] = {
      {0x00000000, 0x0A000001, true},   // 0.0.0.0 source
      {0x00FFFFFF, 0x0A000001, true},   // 0.255.255.255 source
      {0x7F000001, 0x0A000001, true},   // 127.0.0.1 source
      {0xE0000001, 0x0A000001, true},   // 224.0.0.1 source
      {0xEFFFFFFF, 0x0A000001, true},   // 239.255.255.255 source
      {0xFFFFFFFF, 0x0A000001, true},   // broadcast source
      {0x0A000001, 0x00000001, true},   // 0.0.0.1 destination
      {0x0A000001, 0x7F000001, true},   // loopback destination
      {0x0A000001, 0xE0000005, true},   // multicast destination
      {0x0A000001, 0xEFFFFFFA, true},   // 239.255.255.250 (SSDP)
      {0x0A000001, 0xFFFFFFFF, true},   // limited broadcast destination
      {0x01000000, 0x0A000001, false},  // 1.0.0.0
      {0x7E000001, 0x80000001, false},  // 126.0.0.1 -> 128.0.0.1
      {0xDFFFFFFF, 0xDFFFFFFE, false},  // 223.255.255.255 (not multicast)
      {0xF0000001, 0x0A000001, false},  // 240/4 source is not in the list
      {0x0A000001, 0xF0000001, false},  // nor as a destination
  };
  for (const Case& c : cases) {
    Ipv4Fields f;
    f.src = c.src;
    f.dst = c.dst;
    ParsedPacket p = parse(ipv4_frame(f));
    if (c.martian) {
      EXPECT_EQ(p.kind, PacketKind::kDrop) << std::hex << c.src << " " << c.dst;
      EXPECT_EQ(p.drop, DropReason::kMartian) << std::hex << c.src << " " << c.dst;
    } else {
      EXPECT_EQ(p.kind, PacketKind::kIpv4) << std::hex << c.src << " " << c.dst;
    }
  }
  // A martian with TTL 1 is counted as a martian: it is never forwarded anyway.
  Ipv4Fields f;
  f.dst = 0x7F000001;
  f.ttl = 1;
  EXPECT_EQ(parse(ipv4_frame(f)).drop, DropReason::kMartian);
}

// What the parser reports for every truncation of a frame: `bounds` lists
// (first length at which the reason stops applying, reason) in order.
struct Threshold {
  size_t below;
  DropReason reason;
};

void check_truncations(const Bytes& frame, std::initializer_list<Threshold> bounds,
                       PacketKind full_kind) {
  for (size_t len = 0; len <= frame.size(); ++len) {
    ParsedPacket p = parse_prefix(frame, len);
    const Threshold* expected = nullptr;
    for (const Threshold& t : bounds) {
      if (len < t.below) {
        expected = &t;
        break;
      }
    }
    if (expected != nullptr) {
      ASSERT_EQ(p.kind, PacketKind::kDrop) << "len " << len;
      ASSERT_EQ(drop_reason_name(p.drop), drop_reason_name(expected->reason)) << "len " << len;
    } else {
      ASSERT_EQ(p.kind, full_kind) << "len " << len;
    }
    // Nothing reported lies beyond the bytes given.
    if (p.kind != PacketKind::kDrop) {
      ASSERT_LE(p.l3_offset, len);
    }
    if (p.has_shim) {
      ASSERT_LE(p.shim_offset + 6u, len);
    }
    if (p.kind == PacketKind::kIpv4) {
      ASSERT_LE(p.l3_offset + p.ip_total_len, len);
      ASSERT_LE(p.ihl_bytes, p.ip_total_len);
    }
  }
}

TEST(PacketParser, EveryTruncationOfPlainIpv4) {
  // 14 Ethernet + 20 IP + 12 UDP = 46.
  check_truncations(
      ipv4_frame({}),
      {{14, DropReason::kRunt}, {34, DropReason::kTruncated}, {46, DropReason::kBadIpLength}},
      PacketKind::kIpv4);
}

TEST(PacketParser, EveryTruncationOfQinQShimIpv4WithOptions) {
  Ipv4Fields f;
  f.options = {0x01, 0x01, 0x01, 0x01, 0x01, 0x01, 0x01, 0x00};
  Bytes frame =
      cat({ethernet(0x88B6, {{0x88A8, 10}, {0x8100, 20}}), shim(3, 0, 0, 0x0800), ipv4(f)});
  // Tags end at 22, shim at 28, IP header at 28 + 28 = 56, IP packet at 68.
  ASSERT_EQ(frame.size(), 68u);
  check_truncations(
      frame,
      {{14, DropReason::kRunt}, {56, DropReason::kTruncated}, {68, DropReason::kBadIpLength}},
      PacketKind::kIpv4);
}

TEST(PacketParser, EveryTruncationOfPaddedIpv4) {
  Ipv4Fields f;
  f.payload = {0x30, 0x39, 0x00, 0x50, 0x00, 0x08, 0x00, 0x00};
  Bytes frame = cat({ethernet(0x0800, {{0x8100, 1}}), ipv4(f)});
  frame.resize(64, 0xEE);
  // IP ends at 18 + 28 = 46; the padding after it may be cut anywhere.
  check_truncations(
      frame,
      {{14, DropReason::kRunt}, {38, DropReason::kTruncated}, {46, DropReason::kBadIpLength}},
      PacketKind::kIpv4);
}

TEST(PacketParser, EveryTruncationOfOtherKinds) {
  Bytes arp = cat({ethernet(0x0806, {{0x8100, 7}}), arp_body()});
  arp.resize(64, 0);
  check_truncations(arp, {{14, DropReason::kRunt}, {46, DropReason::kTruncated}}, PacketKind::kArp);

  Bytes ip6(40, 0);
  ip6[0] = 0x60;
  check_truncations(cat({ethernet(0x88B6), shim(1, 0, 0, 0x86DD), ip6}),
                    {{14, DropReason::kRunt}, {60, DropReason::kTruncated}}, PacketKind::kIpv6);

  Bytes pfc = ethernet(0x8808);
  pfc.resize(60, 0);
  check_truncations(pfc, {{14, DropReason::kRunt}}, PacketKind::kMacControl);

  Bytes ctl = cat({ethernet(0x88B5, {{0x8100, 0}}), {'S', 'L', 1, 3, 0, 2, 0, 0, 0, 9}});
  check_truncations(ctl, {{14, DropReason::kRunt}, {18, DropReason::kTruncated}},
                    PacketKind::kSluiceControl);
}

TEST(PacketParser, FieldsAreResetBetweenPackets) {
  ParsedPacket p;
  parse_packet(ipv4_frame({}).data(), 46, &p);
  ASSERT_EQ(p.src_port, 12345);
  Bytes pfc = ethernet(0x8808);
  pfc.resize(60, 0);
  parse_packet(pfc.data(), 60, &p);
  EXPECT_EQ(p.kind, PacketKind::kMacControl);
  EXPECT_EQ(p.src_ip, 0u);
  EXPECT_EQ(p.src_port, 0);
  EXPECT_FALSE(p.has_vlan);
}

}  // namespace
}  // namespace sluice
