#pragma once
// The switch's side of HPCC's in-band telemetry (HPCC: High Precision
// Congestion Control, section 3.2 and Fig. 4): at departure from an egress
// port whose switch stamps INT, a transport data frame that asks for INT
// (segment_wire.h, flag bit 2) gets the port's record written into the next
// free hop slot: the departure instant, the bytes the port transmitted
// before it, the bytes queued at the port, and the port's rate. A frame
// whose slots are all filled passes unchanged (counted by the caller). The
// UDP checksum is 0 and the IP header does not change, so no checksum moves.

#include <cstdint>

#include "lib/net/byte_order.h"
#include "lib/emulator/transport/segment_wire.h"

namespace sluice {

enum class IntStamp : uint8_t { kNotAsked, kStamped, kFull };

// Where the IPv4 header of an Ethernet frame starts, past VLAN tags and the
// 0x88B6 shim (lib/control/data_shim.h: 6 bytes whose last two are the
// ethertype); 0 when the frame is not IPv4.
inline uint32_t ipv4_offset(const uint8_t* frame, uint32_t len) {
  uint32_t at = 12;
  for (int i = 0; i < 4 && at + 2 <= len; ++i) {
    const uint16_t type = load_be16(frame + at);
    if (type == 0x0800) return at + 2;
    if (type == 0x8100 || type == 0x88A8) {
      at += 4;
    } else if (type == 0x88B6) {
      at += 6;
    } else {
      return 0;
    }
  }
  return 0;
}

// frame: the frame from its L3 header on (l3 = frame + l3_offset), len bytes
// from there.
inline IntStamp stamp_int(uint8_t* l3, uint32_t len, const IntHop& hop) {
  if (len < 20 + 8 + kSltHeaderBytes + kIntRoomBytes) return IntStamp::kNotAsked;
  if (slt_data_header(l3, len) == nullptr) return IntStamp::kNotAsked;
  uint8_t* slt = l3 + 20 + 8;
  if ((slt[5] & kSltFlagInt) == 0) return IntStamp::kNotAsked;
  // The room follows the header's options (segment_wire.h); a frame with
  // flags this reader does not know, or too short for its room, is left alone.
  const uint32_t options = slt_option_bytes(slt[5]);
  if ((slt[5] & ~kSltKnownFlags) != 0 || len < 20 + 8 + kSltHeaderBytes + options + kIntRoomBytes)
    return IntStamp::kNotAsked;
  const uint8_t hops = slt[6];
  if (hops >= kMaxIntHops) return IntStamp::kFull;
  uint8_t* rec = slt + kSltHeaderBytes + options + hops * kIntRecordBytes;
  store_be32(rec, static_cast<uint32_t>(hop.ts_ns));
  store_be32(rec + 4, static_cast<uint32_t>(hop.tx_bytes));
  store_be32(rec + 8, hop.qlen_bytes);
  store_be32(rec + 12, hop.rate_mbps);
  slt[6] = static_cast<uint8_t>(hops + 1);
  return IntStamp::kStamped;
}

}  // namespace sluice
