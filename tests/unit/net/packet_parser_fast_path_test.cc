// The parser's fast path (untagged IPv4, IHL 5) against hand-computed
// expectations at its edges, against an independent RFC 1071 checksum, and
// field by field against the general path on mutated frames.

#include <gtest/gtest.h>

#include <memory>
#include <random>

#include "lib/net/packet_parser.h"
#include "tests/unit/net/test_frames.h"

namespace sluice {
namespace {

using test::Bytes;
using test::cat;
using test::ethernet;
using test::ipv4;
using test::Ipv4Fields;

// Exactly-sized heap copy, so AddressSanitizer catches reads past the end.
ParsedPacket parse_prefix(const Bytes& frame, size_t len) {
  std::unique_ptr<uint8_t[]> buf(new uint8_t[len]);
  std::copy(frame.begin(), frame.begin() + static_cast<ptrdiff_t>(len), buf.get());
  ParsedPacket p;
  std::memset(&p, 0xA5, sizeof p);  // garbage the parser must overwrite
  parse_packet(buf.get(), static_cast<uint32_t>(len), &p);
  return p;
}

ParsedPacket parse(const Bytes& frame) { return parse_prefix(frame, frame.size()); }

Bytes ipv4_frame(const Ipv4Fields& f) { return cat({ethernet(0x0800), ipv4(f)}); }

void expect_same(const ParsedPacket& a, const ParsedPacket& b, const std::string& what) {
  EXPECT_EQ(a.kind, b.kind) << what;
  EXPECT_EQ(a.drop, b.drop) << what;
  EXPECT_EQ(a.l3_offset, b.l3_offset) << what;
  EXPECT_EQ(a.ethertype, b.ethertype) << what;
  EXPECT_EQ(a.has_vlan, b.has_vlan) << what;
  EXPECT_EQ(a.vlan_tci, b.vlan_tci) << what;
  EXPECT_EQ(a.has_shim, b.has_shim) << what;
  EXPECT_EQ(a.shim_offset, b.shim_offset) << what;
  EXPECT_EQ(a.src_ip, b.src_ip) << what;
  EXPECT_EQ(a.dst_ip, b.dst_ip) << what;
  EXPECT_EQ(a.proto, b.proto) << what;
  EXPECT_EQ(a.ttl, b.ttl) << what;
  EXPECT_EQ(a.tos, b.tos) << what;
  EXPECT_EQ(a.ihl_bytes, b.ihl_bytes) << what;
  EXPECT_EQ(a.ip_total_len, b.ip_total_len) << what;
  EXPECT_EQ(a.is_fragment, b.is_fragment) << what;
  EXPECT_EQ(a.src_port, b.src_port) << what;
  EXPECT_EQ(a.dst_port, b.dst_port) << what;
}

TEST(PacketParserFastPath, EveryFieldOfA64ByteUdpFrame) {
  Ipv4Fields f;
  f.tos = 0x02;
  f.ttl = 2;  // the lowest TTL that is forwarded
  f.src = 0xC0A80101;
  f.dst = 0x0A0000FE;
  f.payload = {0xD4, 0x31, 0x11, 0x5C, 0x00, 0x1A, 0, 0};
  f.payload.resize(26, 0x77);
  Bytes frame = ipv4_frame(f);
  ASSERT_EQ(frame.size(), 60u);  // 64 on the wire with the FCS
  ParsedPacket p = parse(frame);
  ASSERT_EQ(p.kind, PacketKind::kIpv4);
  EXPECT_EQ(p.drop, DropReason{});
  EXPECT_EQ(p.l3_offset, 14);
  EXPECT_EQ(p.ethertype, 0x0800);
  EXPECT_FALSE(p.has_vlan);
  EXPECT_EQ(p.vlan_tci, 0);
  EXPECT_FALSE(p.has_shim);
  EXPECT_EQ(p.shim_offset, 0);
  EXPECT_EQ(p.src_ip, 0xC0A80101u);
  EXPECT_EQ(p.dst_ip, 0x0A0000FEu);
  EXPECT_EQ(p.proto, 17);
  EXPECT_EQ(p.ttl, 2);
  EXPECT_EQ(p.tos, 0x02);
  EXPECT_EQ(p.ihl_bytes, 20);
  EXPECT_EQ(p.ip_total_len, 46);
  EXPECT_FALSE(p.is_fragment);
  EXPECT_EQ(p.src_port, 0xD431);
  EXPECT_EQ(p.dst_port, 0x115C);
}

TEST(PacketParserFastPath, AddressesNextToTheMartianRanges) {
  struct Case {
    uint32_t src, dst;
    bool martian;
  };
  const Case cases[] = {
      {0xFF000001, 0x0A000001, false},  // 255.0.0.1 is not the limited broadcast
      {0x0A000001, 0xFFFFFFFE, false},  // nor is 255.255.255.254
      {0xFFFFFFFF, 0x0A000001, true},   // 255.255.255.255 is
      {0x0A000001, 0xFFFFFFFF, true},
      {0xF0000000, 0xFEFFFFFF, false},  // 240.0.0.0 -> 254.255.255.255
      {0x7F000000, 0x0A000001, true},   // 127.0.0.0
      {0x80000000, 0x7EFFFFFF, false},  // 128.0.0.0 -> 126.255.255.255
      {0xDFFFFFFF, 0xE0000000, true},   // 224.0.0.0 destination
      {0xEFFFFFFF, 0xDFFFFFFF, true},   // 239.255.255.255 source
      {0x01000000, 0x00FFFFFF, true},   // 0.255.255.255 destination
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
      ASSERT_EQ(p.kind, PacketKind::kIpv4) << std::hex << c.src << " " << c.dst;
      EXPECT_EQ(p.src_ip, c.src);
      EXPECT_EQ(p.dst_ip, c.dst);
      EXPECT_EQ(p.src_port, 12345);
      EXPECT_EQ(p.dst_port, 80);
    }
  }
}

TEST(PacketParserFastPath, TotalLengthsAroundThePorts) {
  // total 20..23: no room for ports; 24: exactly the ports. The frame is padded
  // to 60 bytes, so the bytes after the header are there but not the packet's.
  for (int total = 20; total <= 24; ++total) {
    Ipv4Fields f;
    f.total_len_override = total;
    Bytes frame = ipv4_frame(f);
    frame.resize(60, 0);
    ParsedPacket p = parse(frame);
    ASSERT_EQ(p.kind, PacketKind::kIpv4) << total;
    EXPECT_EQ(p.ip_total_len, total);
    EXPECT_EQ(p.src_port, total == 24 ? 12345 : 0) << total;
    EXPECT_EQ(p.dst_port, total == 24 ? 80 : 0) << total;
  }
}

TEST(PacketParserFastPath, ShortFramesAroundTheFastPathMinimum) {
  // Header only (34 bytes) through header + ports + 2 (40 bytes), with the
  // total length equal to the frame: ports from 38 bytes on.
  const Ipv4Fields base;
  for (size_t len = 34; len <= 40; ++len) {
    Ipv4Fields f = base;
    f.total_len_override = static_cast<int>(len - 14);
    ParsedPacket p = parse_prefix(ipv4_frame(f), len);
    ASSERT_EQ(p.kind, PacketKind::kIpv4) << len;
    EXPECT_EQ(p.src_port, len >= 38 ? 12345 : 0) << len;
  }
  // And total length one more than the frame holds.
  for (size_t len = 34; len <= 40; ++len) {
    Ipv4Fields f = base;
    f.total_len_override = static_cast<int>(len - 13);
    ParsedPacket p = parse_prefix(ipv4_frame(f), len);
    EXPECT_EQ(p.kind, PacketKind::kDrop) << len;
    EXPECT_EQ(p.drop, DropReason::kBadIpLength) << len;
  }
}

TEST(PacketParserFastPath, NonPortProtocolsAndFragments) {
  const Ipv4Fields base;
  for (uint8_t proto : {0, 1, 5, 7, 16, 18, 47, 132, 255}) {
    Ipv4Fields f = base;
    f.proto = proto;
    ParsedPacket p = parse(ipv4_frame(f));
    ASSERT_EQ(p.kind, PacketKind::kIpv4) << int{proto};
    EXPECT_EQ(p.proto, proto);
    EXPECT_EQ(p.src_port, 0) << int{proto};
    EXPECT_EQ(p.dst_port, 0) << int{proto};
  }
  for (uint8_t proto : {6, 17}) {
    Ipv4Fields f = base;
    f.proto = proto;
    f.frag = 0x2000;  // first fragment: carries the ports, hashed without them
    ParsedPacket p = parse(ipv4_frame(f));
    ASSERT_EQ(p.kind, PacketKind::kIpv4);
    EXPECT_TRUE(p.is_fragment);
    EXPECT_EQ(p.src_port, 0);
    EXPECT_EQ(p.dst_port, 0);
  }
}

// RFC 1071 verification, written here: the folded sum of all header words
// (checksum field included) must be 0xFFFF, i.e. reference_checksum == 0.
bool reference_valid(const uint8_t* ip) { return test::reference_checksum(ip, 20) == 0; }

TEST(PacketParserFastPath, ChecksumAgreesWithRfc1071OnRandomHeaders) {
  std::mt19937 rng(20240611);
  int accepted = 0, rejected = 0;
  for (int i = 0; i < 100000; ++i) {
    Ipv4Fields f;
    f.tos = static_cast<uint8_t>(rng());
    f.id = static_cast<uint16_t>(rng());
    f.frag = static_cast<uint16_t>(rng());  // fragments are forwarded too
    f.ttl = static_cast<uint8_t>(2 + rng() % 254);
    f.proto = static_cast<uint8_t>(rng());
    // Addresses outside 0/8, 127/8 and 224/4 so only the checksum decides.
    f.src = 0x01000000u + static_cast<uint32_t>(rng() % 0x7E000000u);
    f.dst = 0x80000000u + static_cast<uint32_t>(rng() % 0x60000000u);
    Bytes frame = ipv4_frame(f);
    if (i % 2 == 1) {
      // One bit of id, flags/offset or checksum: always detected (RFC 1071).
      static constexpr int kBytes[] = {18, 19, 20, 21, 24, 25};
      frame[kBytes[rng() % 6]] ^= static_cast<uint8_t>(1u << (rng() % 8));
    }
    const bool valid = reference_valid(frame.data() + 14);
    ASSERT_EQ(valid, i % 2 == 0);
    // Untagged (the fast path) and with an 802.1Q tag (the general path).
    Bytes tagged = ethernet(0x0800, {{0x8100, 5}});
    tagged.insert(tagged.end(), frame.begin() + 14, frame.end());
    for (const Bytes* fr : {&frame, &tagged}) {
      ParsedPacket p = parse(*fr);
      if (valid) {
        ASSERT_EQ(p.kind, PacketKind::kIpv4) << i;
        ++accepted;
      } else {
        ASSERT_EQ(p.kind, PacketKind::kDrop) << i;
        ASSERT_EQ(p.drop, DropReason::kBadIpChecksum) << i;
        ++rejected;
      }
    }
  }
  EXPECT_EQ(accepted, 100000);
  EXPECT_EQ(rejected, 100000);
}

TEST(PacketParserFastPath, ChecksumFieldZeroAndAllOnesAreBothMinusZero) {
  // Choose the id so the other words sum (one's complement) to 0xFFFF: the
  // computed checksum is then 0x0000, and 0xFFFF is the same value.
  Ipv4Fields f;
  f.id = 0;
  Bytes frame = ipv4_frame(f);
  frame[24] = frame[25] = 0;
  uint32_t rest = 0;
  for (int i = 14; i < 34; i += 2) rest += static_cast<uint32_t>(frame[i] << 8 | frame[i + 1]);
  while (rest >> 16) rest = (rest & 0xFFFF) + (rest >> 16);
  const uint16_t id = static_cast<uint16_t>(0xFFFF - rest);  // rest + id = 0xFFFF
  frame[18] = static_cast<uint8_t>(id >> 8);
  frame[19] = static_cast<uint8_t>(id);
  ASSERT_TRUE(reference_valid(frame.data() + 14));  // with the field 0x0000
  EXPECT_EQ(parse(frame).kind, PacketKind::kIpv4);
  frame[24] = frame[25] = 0xFF;
  ASSERT_TRUE(reference_valid(frame.data() + 14));
  EXPECT_EQ(parse(frame).kind, PacketKind::kIpv4);
  frame[25] = 0xFE;
  ASSERT_FALSE(reference_valid(frame.data() + 14));
  EXPECT_EQ(parse(frame).drop, DropReason::kBadIpChecksum);
}

// The fast path must give exactly what the general path gives (the two
// share only the 20-byte checksum, which the test above pins down). Frames near
// the fast path's conditions, with a few random bytes changed and a random
// length (the general path is the one the other tests pin down by hand).
TEST(PacketParserFastPath, SameAsTheGeneralPathOnMutatedFrames) {
  std::mt19937 rng(7);
  int fast_shaped = 0, dropped = 0;
  for (int i = 0; i < 200000; ++i) {
    Ipv4Fields f;
    f.proto = static_cast<uint8_t>((rng() % 4 == 0) ? rng() : (rng() % 2 ? 6 : 17));
    f.ttl = static_cast<uint8_t>(rng() % 4 == 0 ? rng() % 3 : 64);
    f.frag = static_cast<uint16_t>(rng() % 3 == 0 ? rng() : 0x4000);
    // First bytes on both sides of each martian range, and 255.
    const uint32_t tops[] = {10, 0, 1, 126, 127, 128, 223, 224, 239, 240, 254, 255};
    const auto address = [&] {
      const uint32_t top = rng() % 2 ? 10 : tops[rng() % 12];
      return top << 24 | (rng() % 4 == 0 ? 0xFFFFFF : rng() & 0xFFFFFF);
    };
    f.src = address();
    f.dst = address();
    f.payload.resize(rng() % 40);
    for (uint8_t& b : f.payload) b = static_cast<uint8_t>(rng());
    if (rng() % 8 == 0) f.total_len_override = static_cast<int>(rng() % 80);
    Bytes frame = ipv4_frame(f);
    if (rng() % 2 == 0) frame.resize(frame.size() + rng() % 20, 0);
    for (int m = rng() % 3 == 0 ? static_cast<int>(1 + rng() % 2) : 0; m > 0; --m) {
      frame[12 + rng() % (frame.size() - 12)] ^= static_cast<uint8_t>(1u << (rng() % 8));
    }
    const size_t len = rng() % 4 == 0 ? rng() % (frame.size() + 1) : frame.size();
    const ParsedPacket p = parse_prefix(frame, len);

    std::unique_ptr<uint8_t[]> buf(new uint8_t[len]);
    std::copy(frame.begin(), frame.begin() + static_cast<ptrdiff_t>(len), buf.get());
    ParsedPacket general;
    std::memset(&general, 0x5A, sizeof general);
    parser_detail::parse_packet_general(buf.get(), static_cast<uint32_t>(len), &general);
    expect_same(p, general, "frame " + std::to_string(i));
    if (HasFailure()) return;
    fast_shaped += p.kind == PacketKind::kIpv4 && p.l3_offset == 14 && p.ihl_bytes == 20;
    dropped += p.kind == PacketKind::kDrop;
  }
  // Enough of both for the comparison to mean something.
  EXPECT_GT(fast_shaped, 40000);
  EXPECT_GT(dropped, 40000);
}

}  // namespace
}  // namespace sluice
