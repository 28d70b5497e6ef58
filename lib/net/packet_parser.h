#pragma once
// Ingress parser: classifies a frame and extracts what forwarding needs, in
// one pass, without allocation and without reading at or beyond data + len.
// docs/packet-processing.md gives the rules, in the order they are checked.

#include <cstdint>

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

inline void parse_ipv4(const uint8_t* ip, uint32_t avail, ParsedPacket* out) {
  if (avail < kIpv4MinHeaderLen) return set_drop(out, DropReason::kTruncated);
  const uint8_t version_ihl = ip[0];
  if ((version_ihl >> 4) != 4) return set_drop(out, DropReason::kBadIpVersion);
  const uint32_t ihl = (version_ihl & 0x0Fu) * 4;
  if (ihl < kIpv4MinHeaderLen) return set_drop(out, DropReason::kBadIhl);
  if (ihl > avail) return set_drop(out, DropReason::kTruncated);
  const uint32_t total = load_be16(ip + 2);
  if (total < ihl || total > avail) return set_drop(out, DropReason::kBadIpLength);
  if (!ipv4_checksum_ok(ip, ihl)) return set_drop(out, DropReason::kBadIpChecksum);

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

}  // namespace parser_detail

// Parses frame bytes [data, data+len). Never reads at or beyond data+len.
inline void parse_packet(const uint8_t* data, uint32_t len, ParsedPacket* out) {
  using parser_detail::set_drop;
  *out = ParsedPacket{};
  if (len < kEthHeaderLen) return set_drop(out, DropReason::kRunt);
  uint32_t off = kEthHeaderLen;
  uint16_t ethertype = load_be16(data + 12);

  // Up to two tags (802.1Q or 802.1ad, in any order); a third is unknown.
  if (parser_detail::is_vlan_tag(ethertype)) {
    if (len < off + kVlanTagLen) return set_drop(out, DropReason::kTruncated);
    out->has_vlan = true;
    out->vlan_tci = load_be16(data + off);
    ethertype = load_be16(data + off + 2);
    off += kVlanTagLen;
    if (parser_detail::is_vlan_tag(ethertype)) {
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
    return parser_detail::parse_ipv4(l3, avail, out);
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

}  // namespace sluice
