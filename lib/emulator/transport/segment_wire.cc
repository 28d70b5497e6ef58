#include "lib/emulator/transport/segment_wire.h"

#include <cstring>

#include "lib/net/byte_order.h"
#include "lib/net/ipv4_rewrite.h"

namespace sluice {
namespace {

// Flows spread over ECMP by their source port.
uint16_t flow_port(uint32_t flow) { return static_cast<uint16_t>(49152 + flow % 16384); }

}  // namespace

uint32_t encode_segment(const Segment& s, const FrameAddrs& a, uint8_t* buf, size_t cap,
                        uint32_t zero_limit) {
  const uint32_t len = segment_frame_bytes(s);
  if (cap < len) return 0;
  const bool int_room = s.int_request || s.int_hops != 0;
  const uint32_t ip_len = len - 14;  // padding to 60 counts as IP payload: harmless
  std::memcpy(buf, a.dst_mac, 6);
  std::memcpy(buf + 6, a.src_mac, 6);
  store_be16(buf + 12, 0x0800);
  uint8_t* ip = buf + 14;
  const uint8_t ecn = s.kind == SegmentKind::kData ? kEcnEct0 : kEcnNotEct;
  ip[0] = 0x45;
  ip[1] = static_cast<uint8_t>(a.dscp << 2 | ecn);
  store_be16(ip + 2, static_cast<uint16_t>(ip_len));
  store_be16(ip + 4, 0);
  store_be16(ip + 6, 0x4000);  // DF
  ip[8] = a.ttl;
  ip[9] = 17;
  store_be16(ip + 10, 0);
  store_be32(ip + 12, a.src_ip);
  store_be32(ip + 16, a.dst_ip);
  store_be16(ip + 10, ipv4_header_checksum(ip, 20));
  uint8_t* udp = ip + 20;
  const bool data = s.kind == SegmentKind::kData;
  store_be16(udp, data ? flow_port(s.flow) : kTransportUdpPort);
  store_be16(udp + 2, data ? kTransportUdpPort : flow_port(s.flow));
  store_be16(udp + 4, static_cast<uint16_t>(ip_len - 20));
  store_be16(udp + 6, 0);
  uint8_t* h = udp + 8;
  std::memcpy(h, "SLT1", 4);
  h[4] = static_cast<uint8_t>(s.kind);
  h[5] = static_cast<uint8_t>((s.ece ? kSltFlagEce : 0) | (s.ue_echo ? kSltFlagUeEcho : 0) |
                              (int_room ? kSltFlagInt : 0) | (s.has_rank ? kSltFlagRank : 0) |
                              (s.has_sack ? kSltFlagSack : 0));
  h[6] = s.int_hops;
  h[7] = 0;
  store_be32(h + 8, s.flow);
  store_be32(h + 12, static_cast<uint32_t>(s.seq));
  store_be32(h + 16, s.bytes);
  store_be64(h + 20, s.ts_ns);
  uint32_t at = kSltOffsetInFrame + kSltHeaderBytes;
  if (s.has_rank) {
    store_be32(buf + at, s.rank);
    at += kSltRankBytes;
  }
  if (s.has_sack) {
    store_be32(buf + at, static_cast<uint32_t>(s.sack_start));
    store_be32(buf + at + 4, static_cast<uint32_t>(s.sack_end));
    at += kSltSackBytes;
  }
  if (int_room) {
    uint8_t* r = buf + at;
    for (uint32_t i = 0; i < kMaxIntHops; ++i, r += kIntRecordBytes) {
      if (i < s.int_hops) {
        store_be32(r, static_cast<uint32_t>(s.hops[i].ts_ns));
        store_be32(r + 4, static_cast<uint32_t>(s.hops[i].tx_bytes));
        store_be32(r + 8, s.hops[i].qlen_bytes);
        store_be32(r + 12, s.hops[i].rate_mbps);
      } else {
        std::memset(r, 0, kIntRecordBytes);
      }
    }
    at += kIntRoomBytes;
  }
  // Payload and padding: zeros, as far as anybody may look.
  const uint32_t zero_end = len < zero_limit ? len : (zero_limit > at ? zero_limit : at);
  if (zero_end > at) std::memset(buf + at, 0, zero_end - at);
  return len;
}

bool decode_segment(const uint8_t* f, uint32_t len, Segment* s, uint32_t* src_ip,
                    uint32_t* dst_ip) {
  if (len < kSltOffsetInFrame + kSltHeaderBytes) return false;
  if (load_be16(f + 12) != 0x0800) return false;
  const uint8_t* ip = f + 14;
  const uint8_t* h = slt_header(ip, len - 14);
  if (h == nullptr) return false;
  const uint8_t kind = h[4];
  if (kind < 1 || kind > 4) return false;
  const uint8_t flags = h[5];
  // An unknown bit may add a field whose length this reader cannot know.
  if ((flags & ~kSltKnownFlags) != 0) return false;
  const bool int_room = (flags & kSltFlagInt) != 0;
  const uint8_t hops = h[6];
  if (hops > kMaxIntHops) return false;
  const uint32_t options = slt_option_bytes(flags);
  if (len < kSltOffsetInFrame + kSltHeaderBytes + options + (int_room ? kIntRoomBytes : 0))
    return false;
  if (!int_room && hops != 0) return false;
  s->kind = static_cast<SegmentKind>(kind);
  s->ecn = ip[1] & 3;
  s->ece = (flags & kSltFlagEce) != 0;
  s->ue_echo = (flags & kSltFlagUeEcho) != 0;
  s->int_request = int_room && s->kind == SegmentKind::kData;
  s->int_hops = hops;
  s->flow = load_be32(h + 8);
  s->seq = load_be32(h + 12);
  s->bytes = load_be32(h + 16);
  s->ts_ns = load_be64(h + 20);
  const uint8_t* o = h + kSltHeaderBytes;
  s->has_rank = (flags & kSltFlagRank) != 0;
  s->rank = s->has_rank ? load_be32(o) : 0;
  if (s->has_rank) o += kSltRankBytes;
  s->has_sack = (flags & kSltFlagSack) != 0;
  s->sack_start = s->has_sack ? load_be32(o) : 0;
  s->sack_end = s->has_sack ? load_be32(o + 4) : 0;
  const uint8_t* r = h + kSltHeaderBytes + options;
  for (uint32_t i = 0; i < hops; ++i, r += kIntRecordBytes) {
    s->hops[i].ts_ns = load_be32(r);
    s->hops[i].tx_bytes = load_be32(r + 4);
    s->hops[i].qlen_bytes = load_be32(r + 8);
    s->hops[i].rate_mbps = load_be32(r + 12);
  }
  if (src_ip) *src_ip = load_be32(ip + 12);
  if (dst_ip) *dst_ip = load_be32(ip + 16);
  return true;
}

}  // namespace sluice
