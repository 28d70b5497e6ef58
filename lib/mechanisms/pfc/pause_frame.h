#pragma once
// MAC Control flow-control frames: IEEE 802.3 Annex 31B PAUSE (opcode
// 0x0001) and Annex 31D / IEEE 802.1Q clause 36 priority-based flow control
// (PFC, opcode 0x0101, formerly 802.1Qbb). Both go to 01:80:C2:00:00:01 with
// type 0x8808 and are padded to the 60-byte minimum frame (64 with FCS).
// docs/mechanisms/pfc.md describes the rules.

#include <array>
#include <cstdint>

#include "lib/config/config.h"

namespace sluice {

inline constexpr MacAddr kMacControlDst = {0x01, 0x80, 0xC2, 0x00, 0x00, 0x01};
inline constexpr uint16_t kOpcodePause = 0x0001;
inline constexpr uint16_t kOpcodePfc = 0x0101;
inline constexpr uint32_t kPfcClasses = 8;
// Opcode (2) + pause_time (2); opcode (2) + enable vector (2) + 8 x time (2).
inline constexpr uint32_t kPauseBodyLen = 4;
inline constexpr uint32_t kPfcBodyLen = 20;
// Every frame built here is this long (no FCS: the NIC appends it).
inline constexpr uint32_t kMacControlFrameLen = 60;

struct MacControlFrame {
  uint16_t opcode = 0;                         // kOpcodePause or kOpcodePfc
  uint8_t class_enable = 0;                    // bit c: quanta[c] is valid. PAUSE: 0xFF
  std::array<uint16_t, kPfcClasses> quanta{};  // PAUSE: pause_time in all 8
  bool is_pause() const { return opcode == kOpcodePause; }
};

// Each builder writes a complete 60-byte frame (dst, src, type, body, zero
// padding) and returns its length, or 0 when cap < 60.
uint32_t build_pause_frame(uint8_t* out, uint32_t cap, const MacAddr& src, uint16_t quanta);
uint32_t build_pfc_frame(uint8_t* out, uint32_t cap, const MacAddr& src, uint8_t class_enable,
                         const std::array<uint16_t, kPfcClasses>& quanta);

// `p` points just past the 0x8808 type (at the opcode); `len` is what remains
// of the frame. False for a body too short for its opcode or an opcode other
// than PAUSE / PFC (the caller counts it). The reserved high octet of the PFC
// enable vector and the padding are ignored, as the standard asks of a
// receiver.
bool parse_mac_control(const uint8_t* p, uint32_t len, MacControlFrame* out);

// 802.3 accepts MAC Control frames sent to the reserved multicast address or
// to the receiving port's own address.
bool mac_control_dst_ok(const uint8_t* frame_dst, const MacAddr& port_mac);

}  // namespace sluice
