#pragma once
// The 0x88B6 data shim: 6 bytes between the Ethernet header (and any VLAN
// tags) and the payload, carrying the upstream BFC queue, the shard, the
// DIBS detour count and the inner Ethernet type. Layout and rules in
// docs/wire-formats.md; lib/net/packet_parser.h reports has_shim and
// shim_offset for received frames.
//
// Insertion and removal work in place on a frame buffer so that the switch
// can use them with rte_pktmbuf_prepend / rte_pktmbuf_adj:
//   insert: p = rte_pktmbuf_prepend(m, kSluiceShimLen); insert_shim(p, 12, shim);
//   strip:  strip_shim(p, parsed.shim_offset, &shim); rte_pktmbuf_adj(m, kSluiceShimLen);

#include <cstdint>

#include "lib/net/byte_order.h"
#include "lib/net/ethertypes.h"

namespace sluice {

struct DataShim {
  uint16_t upstream_queue;
  uint8_t shard;
  uint8_t detours;
  uint16_t inner_ethertype;  // filled in by insert_shim from the frame
};

// Writes / reads the 6 shim bytes at `p` (not the 0x88B6 type before them).
// Per packet on a BFC port, so inline.
inline void write_shim(uint8_t* p, const DataShim& shim) {
  store_be16(p, shim.upstream_queue);
  p[2] = shim.shard;
  p[3] = shim.detours;
  store_be16(p + 4, shim.inner_ethertype);
}
inline DataShim read_shim(const uint8_t* p) { return {load_be16(p), p[2], p[3], load_be16(p + 4)}; }

// `p` points at the shim (the frame's shim_offset); `len` bytes remain.
// False, writing nothing, when fewer than 6 bytes remain.
bool parse_shim(const uint8_t* p, uint32_t len, DataShim* out);

// `frame` starts kSluiceShimLen free bytes before the original frame, whose
// ethertype field is at original offset `type_offset` (12 untagged, 16 or 20
// behind one or two VLAN tags). Moves the first `type_offset` bytes to
// `frame`, sets the type to 0x88B6 and writes the shim after it, with
// inner_ethertype taken from the original type (shim.inner_ethertype is
// ignored). The frame grows by 6 bytes and now starts at `frame`.
void insert_shim(uint8_t* frame, uint32_t type_offset, const DataShim& shim);

// `frame` holds a shim at `shim_offset` (>= 14, as parse_packet reports it).
// Reads it into *out, puts its inner type back in the 0x88B6 field and moves
// the bytes before it 6 bytes forward: the frame now starts at
// frame + kSluiceShimLen and is 6 bytes shorter.
void strip_shim(uint8_t* frame, uint32_t shim_offset, DataShim* out);

}  // namespace sluice
