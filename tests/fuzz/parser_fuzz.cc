// libFuzzer target for the ingress parser and the IPv4 rewrites. Checks that
// whatever the parser accepts stays within the frame, and that the rewrites
// keep a valid header valid.

#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <vector>

#include "lib/net/arp.h"
#include "lib/net/flow_hash.h"
#include "lib/net/ipv4_rewrite.h"
#include "lib/net/packet_parser.h"

namespace {

void check(bool ok) {
  if (!ok) std::abort();
}

void check_ipv4(const uint8_t* data, size_t size, const sluice::ParsedPacket& p) {
  using namespace sluice;
  check(p.l3_offset + p.ip_total_len <= size);
  check(p.ihl_bytes >= 20 && p.ihl_bytes <= p.ip_total_len);
  check(p.ttl >= 2);
  // Rewrite a copy of the header only, so ASan flags any write beyond it.
  std::vector<uint8_t> ip(data + p.l3_offset, data + p.l3_offset + p.ihl_bytes);
  check(ipv4_checksum_ok(ip.data(), p.ihl_bytes));
  ipv4_decrement_ttl(ip.data());
  check(ipv4_checksum_ok(ip.data(), p.ihl_bytes));
  check(ip[8] == p.ttl - 1);
  if (ipv4_ecn_capable(ip.data())) ipv4_set_ecn(ip.data(), kEcnCe);
  check(ipv4_checksum_ok(ip.data(), p.ihl_bytes));
  check(ipv4_header_checksum(ip.data(), p.ihl_bytes) == load_be16(ip.data() + 10));
  const uint32_t h = flow_hash(p.src_ip, p.dst_ip, p.proto, p.src_port, p.dst_port);
  check(ecmp_pick(h, 3) < 3);
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace sluice;
  if (size > 0xFFFF) return 0;
  // An exactly-sized heap copy: any read past the end is an ASan report.
  std::vector<uint8_t> frame(data, data + size);
  const uint8_t* buf = frame.empty() ? nullptr : frame.data();
  ParsedPacket p;
  parse_packet(buf, static_cast<uint32_t>(size), &p);
  if (p.kind != PacketKind::kDrop) check(p.l3_offset <= size);
  if (p.has_shim) check(p.shim_offset + kSluiceShimLen <= size);
  switch (p.kind) {
    case PacketKind::kIpv4:
      check_ipv4(buf, size, p);
      break;
    case PacketKind::kArp: {
      ArpMessage m;
      check(parse_arp(buf + p.l3_offset, static_cast<uint32_t>(size - p.l3_offset), &m));
      break;
    }
    case PacketKind::kIpv6:
      check(p.l3_offset + 40u <= size);
      break;
    default:
      break;
  }
  return 0;
}
