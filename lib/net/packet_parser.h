#pragma once
// Ingress parser: classifies a frame and extracts what forwarding needs, in
// one pass, without allocation and without reading at or beyond data + len.
// docs/packet-processing.md gives the rules, in the order they are checked.

#include <bit>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <type_traits>

#include "lib/common/drop_reason.h"
#include "lib/net/byte_order.h"
#include "lib/net/ethertypes.h"
#include "lib/net/ipv4_rewrite.h"

namespace sluice {

enum class PacketKind : uint8_t { kIpv4, kArp, kMacControl, kSluiceControl, kIpv6, kDrop };

struct ParsedPacket {
  PacketKind kind;
  DropReason drop;     // valid when kind == kDrop (also set to kIpv6 for kIpv6)
  uint16_t l3_offset;  // offset of the L3 header / control payload in the frame
  uint16_t ethertype;  // innermost ethertype
  bool has_vlan;
  uint16_t vlan_tci;  // the outer tag's TCI when two tags are present
  bool has_shim;
  uint16_t shim_offset;  // the 0x88B6 shim: upstream queue(2) shard(1) detours(1) ethertype(2)
  // IPv4 only (set once the header is validated, also for kTtlExpired / kMartian):
  uint32_t src_ip, dst_ip;  // host byte order
  uint8_t proto, ttl, tos, ihl_bytes;
  uint16_t ip_total_len;
  bool is_fragment;             // MF set or fragment offset != 0
  uint16_t src_port, dst_port;  // TCP/UDP of an unfragmented packet whose ports fit; else 0
};

namespace parser_detail {

inline void set_drop(ParsedPacket* out, DropReason reason) {
  out->kind = PacketKind::kDrop;
  out->drop = reason;
}

// Never a source or a destination sluice forwards: 0/8, 127/8, 224/4
// (multicast; sluice does not route it, and it is never a source) and
// 255.255.255.255 (limited broadcast stays on its link).
inline bool martian(uint32_t a) {
  const uint32_t top = a >> 24;
  return (top == 0) | (top == 127) | ((a >> 28) == 0xE) | (a == 0xFFFFFFFFu);
}

inline uint64_t load_native64(const uint8_t* p) {
  uint64_t v;
  std::memcpy(&v, p, sizeof v);
  return v;
}

inline uint32_t load_native32(const uint8_t* p) {
  uint32_t v;
  std::memcpy(&v, p, sizeof v);
  return v;
}

// a + b with end-around carry (one's complement addition in 64 bits).
inline uint64_t add_end_around(uint64_t a, uint64_t b) {
  uint64_t sum;
  const bool carry = __builtin_add_overflow(a, b, &sum);
  return sum + carry;  // after a carry sum <= 2^64 - 2: no second carry
}

// The one's complement sum of a 20-byte header's 16-bit words is 0xFFFF.
// Adds native 64/32-bit words with end-around carry, then folds the halves
// with end-around carry: x + rotl(x, half) holds that fold in its high half.
// Byte order does not matter (RFC 1071 §2(B)), and 0xFFFF is its own swap.
inline bool ipv4_header20_checksum_ok(const uint8_t* ip) {
  uint64_t sum = add_end_around(load_native64(ip), load_native64(ip + 8));
  sum = add_end_around(sum, load_native32(ip + 16));
  const uint32_t s32 = static_cast<uint32_t>((sum + std::rotl(sum, 32)) >> 32);
  return s32 + std::rotl(s32, 16) >= 0xFFFF0000u;
}

inline void parse_ipv4(const uint8_t* ip, uint32_t avail, ParsedPacket* out) {
  if (avail < kIpv4MinHeaderLen) return set_drop(out, DropReason::kTruncated);
  const uint8_t version_ihl = ip[0];
  if ((version_ihl >> 4) != 4) return set_drop(out, DropReason::kBadIpVersion);
  const uint32_t ihl = (version_ihl & 0x0Fu) * 4;
  if (ihl < kIpv4MinHeaderLen) return set_drop(out, DropReason::kBadIhl);
  if (ihl > avail) return set_drop(out, DropReason::kTruncated);
  const uint32_t total = load_be16(ip + 2);
  if (total < ihl || total > avail) return set_drop(out, DropReason::kBadIpLength);
  const bool checksum_ok =
      ihl == kIpv4MinHeaderLen ? ipv4_header20_checksum_ok(ip) : ipv4_checksum_ok(ip, ihl);
  if (!checksum_ok) return set_drop(out, DropReason::kBadIpChecksum);

  out->tos = ip[1];
  out->ip_total_len = static_cast<uint16_t>(total);
  out->is_fragment = (load_be16(ip + 6) & 0x3FFFu) != 0;
  out->ttl = ip[8];
  out->proto = ip[9];
  out->ihl_bytes = static_cast<uint8_t>(ihl);
  out->src_ip = load_be32(ip + 12);
  out->dst_ip = load_be32(ip + 16);
  if (martian(out->src_ip) | martian(out->dst_ip)) {
    return set_drop(out, DropReason::kMartian);
  }
  if (out->ttl <= 1) return set_drop(out, DropReason::kTtlExpired);
  // Every fragment, the first included, hashes without ports so that all
  // fragments of a datagram take the same ECMP member and BFC queue.
  const bool has_ports = (out->proto == kIpProtoTcp) | (out->proto == kIpProtoUdp);
  if (has_ports & !out->is_fragment & (total >= ihl + 4)) {
    out->src_port = load_be16(ip + ihl);
    out->dst_port = load_be16(ip + ihl + 2);
  }
  out->kind = PacketKind::kIpv4;
}

inline bool is_vlan_tag(uint16_t ethertype) {
  return (ethertype == kEtherTypeVlan) | (ethertype == kEtherTypeQinQ);
}

// Per-byte flags for the fast path. kMaybeMartian on a first address byte
// of 0, 127, 224-239 or 255 (only 255.255.255.255 is martian; the general
// path tells it apart); kHasPorts on the protocols TCP and UDP.
inline constexpr uint8_t kMaybeMartian = 1;
inline constexpr uint8_t kHasPorts = 2;
struct ByteFlags {
  uint8_t v[256];
};
inline constexpr ByteFlags kFastFlags = [] {
  ByteFlags t{};
  for (int b = 0; b < 256; ++b) {
    const bool martian = b == 0 || b == 127 || (b >= 224 && b <= 239) || b == 255;
    const bool ports = b == kIpProtoTcp || b == kIpProtoUdp;
    t.v[b] = static_cast<uint8_t>((martian ? kMaybeMartian : 0) | (ports ? kHasPorts : 0));
  }
  return t;
}();

// What every fast-path result shares: kIpv4, untagged, no shim, L3 at 14,
// IHL 5. Only the fields before src_ip are copied from it (one 16-byte
// copy); parse_plain_ipv4 stores the rest one by one.
inline constexpr ParsedPacket kPlainIpv4Template = {
    .kind = PacketKind::kIpv4,
    .drop = DropReason{},
    .l3_offset = kEthHeaderLen,
    .ethertype = kEtherTypeIpv4,
    .has_vlan = false,
    .vlan_tci = 0,
    .has_shim = false,
    .shim_offset = 0,
    .src_ip = 0,
    .dst_ip = 0,
    .proto = 0,
    .ttl = 0,
    .tos = 0,
    .ihl_bytes = kIpv4MinHeaderLen,
    .ip_total_len = 0,
    .is_fragment = false,
    .src_port = 0,
    .dst_port = 0,
};
inline constexpr size_t kTemplatePrefix = offsetof(ParsedPacket, src_ip);
static_assert(kTemplatePrefix == 16, "the prefix is one 16-byte store");
static_assert(std::is_trivially_copyable_v<ParsedPacket>);
inline constexpr size_t kPortsOffset = offsetof(ParsedPacket, src_port);
static_assert(offsetof(ParsedPacket, dst_port) == kPortsOffset + 2);
static_assert(std::endian::native == std::endian::little, "the port store assumes little-endian");

// The common case, handled in straight-line code: an untagged IPv4 frame,
// IHL 5, room for the ports, valid length and checksum, no address that
// might be martian, TTL > 1. Fills *out exactly as the general path would
// and returns true; returns false (having written nothing) otherwise.
inline bool parse_plain_ipv4(const uint8_t* data, uint32_t len, ParsedPacket* out) {
  constexpr uint32_t kL3 = kEthHeaderLen;
  constexpr uint32_t kMinTotal = kIpv4MinHeaderLen + 4;  // header and ports
  if (len < kL3 + kMinTotal) return false;
  const uint32_t type_vihl_tos = load_be32(data + 12);  // ethertype, version|IHL, TOS
  if ((type_vihl_tos >> 8) != (uint32_t{kEtherTypeIpv4} << 8 | 0x45)) return false;
  const uint8_t* ip = data + kL3;
  const uint32_t total = load_be16(ip + 2);
  if (total - kMinTotal > len - kL3 - kMinTotal) return false;  // kMinTotal <= total <= avail
  if (!ipv4_header20_checksum_ok(ip)) return false;
  // ip[12] and ip[16] are the first bytes of the source and destination.
  if ((kFastFlags.v[ip[12]] | kFastFlags.v[ip[16]]) & kMaybeMartian) return false;
  const uint8_t ttl = ip[8];
  if (ttl <= 1) return false;
  const uint8_t proto = ip[9];
  const bool fragment = (load_be16(ip + 6) & 0x3FFFu) != 0;
  // Big-endian source port then destination port; total >= 24 and len >= 38,
  // so they are inside the packet and the frame.
  uint32_t ports = 0;
  if (((kFastFlags.v[proto] & kHasPorts) != 0) & !fragment) {
    ports = load_be32(ip + kIpv4MinHeaderLen);
  }

  std::memcpy(out, &kPlainIpv4Template, kTemplatePrefix);
  out->src_ip = load_be32(ip + 12);
  out->dst_ip = load_be32(ip + 16);
  out->proto = proto;
  out->ttl = ttl;
  out->tos = static_cast<uint8_t>(type_vihl_tos);
  out->ihl_bytes = kIpv4MinHeaderLen;
  out->ip_total_len = static_cast<uint16_t>(total);
  out->is_fragment = fragment;
  // Both ports in one store: rotl puts src_port in the low half (see the
  // static_asserts at kPortsOffset).
  const uint32_t ports_native = std::rotl(ports, 16);
  std::memcpy(reinterpret_cast<uint8_t*>(out) + kPortsOffset, &ports_native, sizeof ports_native);
  return true;
}

// Every rule of docs/packet-processing.md, for any frame. parse_packet tries
// the fast path first and falls back to this, which gives the same result.
[[gnu::noinline]] inline void parse_packet_general(const uint8_t* data, uint32_t len,
                                                   ParsedPacket* out) {
  *out = ParsedPacket{};
  if (len < kEthHeaderLen) return set_drop(out, DropReason::kRunt);
  uint32_t off = kEthHeaderLen;
  uint16_t ethertype = load_be16(data + 12);

  // Up to two tags (802.1Q or 802.1ad, in any order); a third is unknown.
  if (is_vlan_tag(ethertype)) {
    if (len < off + kVlanTagLen) return set_drop(out, DropReason::kTruncated);
    out->has_vlan = true;
    out->vlan_tci = load_be16(data + off);
    ethertype = load_be16(data + off + 2);
    off += kVlanTagLen;
    if (is_vlan_tag(ethertype)) {
      if (len < off + kVlanTagLen) return set_drop(out, DropReason::kTruncated);
      ethertype = load_be16(data + off + 2);
      off += kVlanTagLen;
    }
  }
  if (ethertype == kEtherTypeSluiceData) {
    if (len < off + kSluiceShimLen) return set_drop(out, DropReason::kTruncated);
    out->has_shim = true;
    out->shim_offset = static_cast<uint16_t>(off);
    ethertype = load_be16(data + off + 4);
    off += kSluiceShimLen;
  }
  out->l3_offset = static_cast<uint16_t>(off);
  out->ethertype = ethertype;
  const uint8_t* l3 = data + off;
  const uint32_t avail = len - off;

  if (ethertype == kEtherTypeIpv4) [[likely]] {
    return parse_ipv4(l3, avail, out);
  }
  switch (ethertype) {
    case kEtherTypeArp:
      // Ethernet/IPv4 ARP only: htype 1, ptype 0x0800, hlen 6, plen 4, op 1|2.
      if (avail < kArpIpv4Len) return set_drop(out, DropReason::kTruncated);
      if (load_be32(l3) != 0x00010800u || load_be16(l3 + 4) != 0x0604u ||
          load_be16(l3 + 6) - 1u > 1u) {
        return set_drop(out, DropReason::kBadArp);
      }
      out->kind = PacketKind::kArp;
      return;
    case kEtherTypeIpv6:
      if (avail < kIpv6HeaderLen) return set_drop(out, DropReason::kTruncated);
      out->kind = PacketKind::kIpv6;
      out->drop = DropReason::kIpv6;
      return;
    case kEtherTypeMacControl:
      out->kind = PacketKind::kMacControl;
      return;
    case kEtherTypeSluiceControl:
      out->kind = PacketKind::kSluiceControl;
      return;
    default:
      return set_drop(out, DropReason::kUnknownEthertype);
  }
}

}  // namespace parser_detail

// Parses frame bytes [data, data+len). Never reads at or beyond data+len.
inline void parse_packet(const uint8_t* data, uint32_t len, ParsedPacket* out) {
  if (parser_detail::parse_plain_ipv4(data, len, out)) [[likely]]
    return;
  parser_detail::parse_packet_general(data, len, out);
}

}  // namespace sluice
