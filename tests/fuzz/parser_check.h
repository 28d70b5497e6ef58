#pragma once
// One check of the ingress parser and the IPv4 rewrites on arbitrary bytes,
// shared by the libFuzzer target (parser_fuzz.cc) and the corpus replay in
// the unit tests (tests/unit/fuzz/). Whatever the parser accepts must stay
// within the frame, and the rewrites must keep a valid header valid. Returns
// false on a violation; ASan reports any read or write past the input.

#include <cstdint>
#include <vector>

#include "lib/net/arp.h"
#include "lib/net/flow_hash.h"
#include "lib/net/ipv4_rewrite.h"
#include "lib/net/packet_parser.h"

namespace sluice {

inline bool check_parser_ipv4(const uint8_t* data, uint32_t size, const ParsedPacket& p) {
  if (p.l3_offset + p.ip_total_len > size) return false;
  if (p.ihl_bytes < 20 || p.ihl_bytes > p.ip_total_len) return false;
  if (p.ttl < 2) return false;
  // Rewrite a copy of the header only, so ASan flags any write beyond it.
  std::vector<uint8_t> ip(data + p.l3_offset, data + p.l3_offset + p.ihl_bytes);
  if (!ipv4_checksum_ok(ip.data(), p.ihl_bytes)) return false;
  ipv4_decrement_ttl(ip.data());
  if (!ipv4_checksum_ok(ip.data(), p.ihl_bytes)) return false;
  if (ip[8] != p.ttl - 1) return false;
  if (ipv4_ecn_capable(ip.data())) ipv4_set_ecn(ip.data(), kEcnCe);
  if (!ipv4_checksum_ok(ip.data(), p.ihl_bytes)) return false;
  if (ipv4_header_checksum(ip.data(), p.ihl_bytes) != load_be16(ip.data() + 10)) return false;
  const uint32_t h = flow_hash(p.src_ip, p.dst_ip, p.proto, p.src_port, p.dst_port);
  return ecmp_pick(h, 3) < 3;
}

// `data` holds exactly `size` bytes (nullptr when size is 0).
inline bool check_parser(const uint8_t* data, uint32_t size) {
  ParsedPacket p;
  parse_packet(data, size, &p);
  if (p.kind != PacketKind::kDrop && p.l3_offset > size) return false;
  if (p.has_shim && p.shim_offset + kSluiceShimLen > size) return false;
  switch (p.kind) {
    case PacketKind::kIpv4:
      return check_parser_ipv4(data, size, p);
    case PacketKind::kArp: {
      ArpMessage m;
      return parse_arp(data + p.l3_offset, size - p.l3_offset, &m);
    }
    case PacketKind::kIpv6:
      return p.l3_offset + 40u <= size;
    default:
      return true;
  }
}

}  // namespace sluice
