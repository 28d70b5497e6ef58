#include "lib/mechanisms/pfc/pause_frame.h"

#include <cstring>

#include "lib/net/byte_order.h"
#include "lib/net/ethertypes.h"

namespace sluice {

namespace {

// Zeroes the whole frame, writes the Ethernet header and the opcode, and
// returns where the opcode's operands start.
uint8_t* start_frame(uint8_t* out, const MacAddr& src, uint16_t opcode) {
  std::memset(out, 0, kMacControlFrameLen);
  std::memcpy(out, kMacControlDst.data(), 6);
  std::memcpy(out + 6, src.data(), 6);
  store_be16(out + 12, kEtherTypeMacControl);
  store_be16(out + kEthHeaderLen, opcode);
  return out + kEthHeaderLen + 2;
}

}  // namespace

uint32_t build_pause_frame(uint8_t* out, uint32_t cap, const MacAddr& src, uint16_t quanta) {
  if (cap < kMacControlFrameLen) return 0;
  uint8_t* body = start_frame(out, src, kOpcodePause);
  store_be16(body, quanta);
  return kMacControlFrameLen;
}

uint32_t build_pfc_frame(uint8_t* out, uint32_t cap, const MacAddr& src, uint8_t class_enable,
                         const std::array<uint16_t, kPfcClasses>& quanta) {
  if (cap < kMacControlFrameLen) return 0;
  uint8_t* body = start_frame(out, src, kOpcodePfc);
  store_be16(body, class_enable);  // high octet reserved, zero
  for (uint32_t c = 0; c < kPfcClasses; ++c) {
    // A class not enabled carries time 0, as senders conventionally do.
    store_be16(body + 2 + 2 * c, (class_enable >> c) & 1 ? quanta[c] : 0);
  }
  return kMacControlFrameLen;
}

bool parse_mac_control(const uint8_t* p, uint32_t len, MacControlFrame* out) {
  if (len < 2) return false;
  const uint16_t opcode = load_be16(p);
  if (opcode == kOpcodePause) {
    if (len < kPauseBodyLen) return false;
    out->opcode = opcode;
    out->class_enable = 0xFF;
    out->quanta.fill(load_be16(p + 2));
    return true;
  }
  if (opcode == kOpcodePfc) {
    if (len < kPfcBodyLen) return false;
    out->opcode = opcode;
    out->class_enable = p[3];
    for (uint32_t c = 0; c < kPfcClasses; ++c) out->quanta[c] = load_be16(p + 4 + 2 * c);
    return true;
  }
  return false;
}

bool mac_control_dst_ok(const uint8_t* frame_dst, const MacAddr& port_mac) {
  return std::memcmp(frame_dst, kMacControlDst.data(), 6) == 0 ||
         std::memcmp(frame_dst, port_mac.data(), 6) == 0;
}

}  // namespace sluice
