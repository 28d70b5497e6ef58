#pragma once
// Transport frames on the wire (docs/wire-formats.md "Transport frames"):
// Ethernet II / IPv4 / UDP to port kTransportUdpPort / the 28-byte SLT1
// header / for data, the payload (zeros), and, when INT is asked for, room
// for kMaxIntHops hop records of 16 bytes that switches fill in on the way
// (int_stamp.h). The IP ECN field carries ECT(0) on data (Not-ECT on
// replies) and whatever the switches marked; the DSCP is the sender's.
//
// SLT1 header, big-endian, first in the UDP payload:
//   0  magic "SLT1"        4  kind u8 (1 data, 2 ACK, 3 NACK, 4 CNP)
//   5  flags u8 (bit 0 ECE, bit 1 UE echo, bit 2 INT requested, bit 3 rank,
//      bit 4 SACK block; bits 5-7 unknown: the frame is refused)
//   6  INT hops filled u8  7  reserved (0)
//   8  flow id u32         12 sequence u32 (byte offset / next byte expected)
//   16 payload bytes u32   20 timestamp u64 (data: send instant; reply: echoed)
//   28 options, each only when its bit is set, in this order:
//      rank u32 (bit 3; pFabric's priority, smaller = higher),
//      SACK block (bit 4): start u32, end u32 (bytes [start, end) arrived)
//   then the INT records (if bit 2): kMaxIntHops x { timestamp u32 (ns mod
//      2^32), transmitted bytes u32 (mod 2^32), queue bytes u32, rate Mb/s u32 }
// A frame without bits 3 and 4 is byte for byte what it was before they
// existed. A record's timestamp and transmitted bytes wrap at 2^32: decode()
// gives them as read (zero-extended); a reader takes differences modulo 2^32
// (int_delta()).

#include <cstddef>
#include <cstdint>
#include <cstring>

#include "lib/emulator/transport/segment.h"
#include "lib/net/byte_order.h"

namespace sluice {

constexpr uint16_t kTransportUdpPort = 9001;
constexpr uint32_t kSltHeaderBytes = 28;
constexpr uint32_t kIntRecordBytes = 16;
constexpr uint32_t kIntRoomBytes = kMaxIntHops * kIntRecordBytes;
constexpr uint32_t kSltOffsetInFrame = 14 + 20 + 8;  // Ethernet, IPv4, UDP
constexpr uint32_t kMinFrameBytes = 60;

// SLT1 flag bits (header byte 5).
constexpr uint8_t kSltFlagEce = 1;
constexpr uint8_t kSltFlagUeEcho = 2;
constexpr uint8_t kSltFlagInt = 4;
constexpr uint8_t kSltFlagRank = 8;
constexpr uint8_t kSltFlagSack = 16;
constexpr uint8_t kSltKnownFlags = 31;
constexpr uint32_t kSltRankBytes = 4;
constexpr uint32_t kSltSackBytes = 8;

// Bytes of the options (rank, SACK block) a header with these flags carries
// between the 28 fixed bytes and the INT room.
inline uint32_t slt_option_bytes(uint8_t flags) {
  return ((flags & kSltFlagRank) != 0 ? kSltRankBytes : 0) +
         ((flags & kSltFlagSack) != 0 ? kSltSackBytes : 0);
}
inline uint32_t slt_option_bytes(const Segment& s) {
  return (s.has_rank ? kSltRankBytes : 0) + (s.has_sack ? kSltSackBytes : 0);
}

// Where a frame goes: MACs as 6 bytes, IPv4 in host order.
struct FrameAddrs {
  uint8_t dst_mac[6];
  uint8_t src_mac[6];
  uint32_t src_ip;
  uint32_t dst_ip;
  uint8_t dscp;
  uint8_t ttl = 64;  // IPv4 TTL of every frame the host sends
};

// Frame bytes of a segment (options, payload and INT room included; at
// least 60).
inline uint32_t segment_frame_bytes(const Segment& s) {
  uint32_t n = kSltOffsetInFrame + kSltHeaderBytes + slt_option_bytes(s) + s.bytes;
  if (s.int_request || s.int_hops != 0) n += kIntRoomBytes;
  return n < kMinFrameBytes ? kMinFrameBytes : n;
}
// Frame bytes beyond the payload of a data segment (with a rank: pFabric).
inline uint32_t segment_header_bytes(bool int_room, bool rank = false) {
  return kSltOffsetInFrame + kSltHeaderBytes + (rank ? kSltRankBytes : 0) +
         (int_room ? kIntRoomBytes : 0);
}

// Writes s's frame into buf (cap bytes, at least segment_frame_bytes(s));
// payload bytes are zeroed up to zero_limit bytes of the frame (the rest is
// left as it is: nobody reads it; a capture keeps at most that many).
// Returns the frame's length, 0 when it does not fit.
uint32_t encode_segment(const Segment& s, const FrameAddrs& a, uint8_t* buf, size_t cap,
                        uint32_t zero_limit = UINT32_MAX);
// A transport frame's segment (ecn from the IP header); false when the frame
// is not one (not IPv4/UDP to kTransportUdpPort, no SLT1 magic, too short
// for its header, options and INT room, an unknown kind, an unknown flag
// bit, more hops than kMaxIntHops). *src_ip, *dst_ip (host order) when not
// null.
bool decode_segment(const uint8_t* frame, uint32_t len, Segment* s, uint32_t* src_ip = nullptr,
                    uint32_t* dst_ip = nullptr);

// The SLT1 header of a transport frame whose IPv4 header is at l3, len
// bytes from there on: nullptr unless IPv4 with a 20-byte header (our hosts
// send no options), UDP with kTransportUdpPort as source or destination
// port, and the magic.
inline const uint8_t* slt_header(const uint8_t* l3, uint32_t len) {
  if (len < 20 + 8 + kSltHeaderBytes || l3[0] != 0x45 || l3[9] != 17) return nullptr;
  const uint8_t* udp = l3 + 20;
  if (load_be16(udp) != kTransportUdpPort && load_be16(udp + 2) != kTransportUdpPort)
    return nullptr;
  const uint8_t* h = udp + 8;
  return std::memcmp(h, "SLT1", 4) == 0 ? h : nullptr;
}
// The same for a data segment (which goes to kTransportUdpPort).
inline const uint8_t* slt_data_header(const uint8_t* l3, uint32_t len) {
  const uint8_t* h = slt_header(l3, len);
  if (h == nullptr || load_be16(l3 + 22) != kTransportUdpPort) return nullptr;
  return h[4] == static_cast<uint8_t>(SegmentKind::kData) ? h : nullptr;
}

// A reply (ACK, NACK, CNP) of the transport (IPv4 header at l3, len bytes
// from there on).
inline bool slt_is_reply(const uint8_t* l3, uint32_t len) {
  const uint8_t* h = slt_header(l3, len);
  return h != nullptr && h[4] >= static_cast<uint8_t>(SegmentKind::kAck) &&
         h[4] <= static_cast<uint8_t>(SegmentKind::kCnp);
}

// The rank a pFabric switch gives a frame without one: the lowest priority.
constexpr uint32_t kSltNoRank = UINT32_MAX;

// pFabric's rank of a transport frame (IPv4 header at l3, len bytes from
// there on): false unless it is one (magic, a known kind) whose flag bit 3
// says it carries a rank, and long enough to hold it; the switch then uses
// kSltNoRank. Reads nothing at or past l3 + len.
inline bool slt_rank(const uint8_t* l3, uint32_t len, uint32_t* rank) {
  const uint8_t* h = slt_header(l3, len);
  if (h == nullptr || h[4] < 1 || h[4] > 4 || (h[5] & kSltFlagRank) == 0) return false;
  if (len < 20 + 8 + kSltHeaderBytes + kSltRankBytes) return false;
  *rank = load_be32(h + kSltHeaderBytes);
  return true;
}

// The flow id of a transport data frame (IPv4 header at l3, len bytes from
// there on); false when it is not one.
inline bool transport_data_flow(const uint8_t* l3, uint32_t len, uint32_t* flow) {
  const uint8_t* h = slt_data_header(l3, len);
  if (h == nullptr) return false;
  *flow = load_be32(h + 8);
  return true;
}

// b - a for a record field that wraps at 2^32.
inline uint64_t int_delta(uint64_t b, uint64_t a) {
  return static_cast<uint32_t>(static_cast<uint32_t>(b) - static_cast<uint32_t>(a));
}

}  // namespace sluice
