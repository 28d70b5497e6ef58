#pragma once
// One check of the MAC Control codec (IEEE 802.3x PAUSE and PFC,
// lib/mechanisms/pfc/pause_frame.h) on arbitrary bytes, shared by the libFuzzer target
// (pause_fuzz.cc) and the corpus replay in the unit tests. The input is a
// whole frame. parse_mac_control sees what follows the 0x8808 type when the
// parser calls the frame MAC Control, and the bytes after the first 14
// otherwise. Whatever it accepts must build again into a 60-byte frame that
// parses to the same opcode, enable vector and times of the enabled classes.
// Returns false on a violation; ASan reports any read past the input.

#include <array>
#include <cstdint>
#include <vector>

#include "lib/net/packet_parser.h"
#include "lib/mechanisms/pfc/pause_frame.h"

namespace sluice {

// `data` holds exactly `size` bytes (nullptr when size is 0).
inline bool check_pause_codec(const uint8_t* data, uint32_t size) {
  if (size < 14) return true;  // parse_packet drops it as a runt
  ParsedPacket p;
  parse_packet(data, size, &p);
  const uint32_t off = p.kind == PacketKind::kMacControl ? p.l3_offset : 14;
  if (off > size) return false;
  const MacAddr port_mac{{2, 0, 0, 0, 0, 9}};
  (void)mac_control_dst_ok(data, port_mac);
  MacControlFrame m;
  if (!parse_mac_control(data + off, size - off, &m)) return true;
  const uint32_t body = m.is_pause() ? kPauseBodyLen : kPfcBodyLen;
  if (m.opcode != kOpcodePause && m.opcode != kOpcodePfc) return false;
  if (size - off < body) return false;  // accepted a body shorter than its opcode needs
  if (m.is_pause()) {
    if (m.class_enable != 0xFF) return false;
    for (uint16_t q : m.quanta) {
      if (q != m.quanta[0]) return false;
    }
  }
  // Build it again, exactly sized, and parse what was built.
  std::vector<uint8_t> out(kMacControlFrameLen);
  const MacAddr src{{2, 0, 0, 0, 0, 2}};
  const uint32_t len =
      m.is_pause()
          ? build_pause_frame(out.data(), kMacControlFrameLen, src, m.quanta[0])
          : build_pfc_frame(out.data(), kMacControlFrameLen, src, m.class_enable, m.quanta);
  if (len != kMacControlFrameLen) return false;
  ParsedPacket q;
  parse_packet(out.data(), len, &q);
  if (q.kind != PacketKind::kMacControl || q.l3_offset != 14) return false;
  if (!mac_control_dst_ok(out.data(), port_mac)) return false;
  MacControlFrame again;
  if (!parse_mac_control(out.data() + 14, len - 14, &again)) return false;
  if (again.opcode != m.opcode || again.class_enable != m.class_enable) return false;
  for (uint32_t c = 0; c < kPfcClasses; ++c) {
    if (((m.class_enable >> c) & 1) && again.quanta[c] != m.quanta[c]) return false;
  }
  return true;
}

}  // namespace sluice
