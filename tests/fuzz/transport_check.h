#pragma once
// One check of the transport frames of emulated hosts
// (lib/emulator/transport/segment_wire.h, docs/wire-formats.md "Transport
// frames") on arbitrary frame bytes, shared by the libFuzzer target
// (transport_fuzz.cc) and the corpus replay in the unit tests. A frame that
// decode_segment accepts must hold its header, options and INT room; the
// switch's rank reader (slt_rank) must agree with it on the rank; INT
// stamping writes only inside the frame and leaves it decodable with the
// same rank; and a decoded segment encodes to a frame that decodes to the
// same segment. Returns false on a violation; ASan reports any access
// outside the frame.

#include <cstdint>
#include <vector>

#include "lib/emulator/transport/segment_wire.h"
#include "lib/mechanisms/int/int_stamp.h"

namespace sluice {

inline bool same_segment(const Segment& a, const Segment& b) {
  if (a.kind != b.kind || a.flow != b.flow || a.seq != b.seq || a.bytes != b.bytes ||
      a.ts_ns != b.ts_ns || a.ece != b.ece || a.ue_echo != b.ue_echo || a.int_hops != b.int_hops ||
      a.has_rank != b.has_rank || a.rank != b.rank || a.has_sack != b.has_sack ||
      a.sack_start != b.sack_start || a.sack_end != b.sack_end) {
    return false;
  }
  for (uint32_t i = 0; i < a.int_hops; ++i) {
    if (a.hops[i].ts_ns != b.hops[i].ts_ns || a.hops[i].tx_bytes != b.hops[i].tx_bytes ||
        a.hops[i].qlen_bytes != b.hops[i].qlen_bytes || a.hops[i].rate_mbps != b.hops[i].rate_mbps)
      return false;
  }
  return true;
}

// `data` holds exactly `size` bytes (nullptr when size is 0).
inline bool check_transport_frame(const uint8_t* data, uint32_t size) {
  Segment s;
  uint32_t src = 0, dst = 0;
  const bool ok = decode_segment(data, size, &s, &src, &dst);
  uint32_t rank = 0;
  const bool ranked = size >= 14 && slt_rank(data + 14, size - 14, &rank);
  if (!ok) {
    // The rank reader never reads past the end (ASan), whatever it says.
    return true;
  }
  const bool room = s.int_request || s.int_hops != 0;
  if (kSltOffsetInFrame + kSltHeaderBytes + slt_option_bytes(s) + (room ? kIntRoomBytes : 0) > size)
    return false;
  if (ranked != s.has_rank || (ranked && rank != s.rank)) return false;

  // A switch stamps a record into a copy: the frame stays a transport frame
  // with the same rank, one more hop when it asked for one.
  std::vector<uint8_t> copy(data, data + size);
  const IntStamp st = stamp_int(copy.data() + 14, size - 14, IntHop{1, 2, 3, 4});
  Segment stamped;
  if (!decode_segment(copy.data(), size, &stamped)) return false;
  if (stamped.has_rank != s.has_rank || stamped.rank != s.rank) return false;
  if (st == IntStamp::kStamped && stamped.int_hops != s.int_hops + 1) return false;
  if (st != IntStamp::kStamped && copy != std::vector<uint8_t>(data, data + size)) return false;

  // Encoded again (payload bytes within a jumbo frame), it decodes the same.
  if (s.bytes > 9000) return true;
  FrameAddrs a{};
  a.src_ip = src;
  a.dst_ip = dst;
  std::vector<uint8_t> out(segment_frame_bytes(s));
  const uint32_t len = encode_segment(s, a, out.data(), out.size());
  if (len != out.size()) return false;
  Segment again;
  if (!decode_segment(out.data(), len, &again)) return false;
  return same_segment(s, again);
}

}  // namespace sluice
