#pragma once
// Per-packet metadata that crosses lcores with the mbuf.
// - MbufMeta, what the ingress lcore decided and the egress lcore needs,
//   or a module's step reads while the packet is queued (a packet of a
//   cut-through run never gets it: nothing reads it), packed in the
//   32-bit hash.usr field (RX hash values are not used after
//   parsing): egress port (16 bits), L3 offset (7), data queue (6),
//   ECN-capable (1), and two DIBS bits: on its way to a detour port's owner
//   (1), MbufExtra::detours set (1). The DIBS bits keep a packet with no
//   detours from touching the dynamic field's cache line; over an internal
//   link the upstream switch's metadata is still in the mbuf when the next
//   switch reads it. A hop that needs no MbufExtra reads only the mbuf's
//   first cache line and the frame's headers (an internal link's due time
//   travels in its ring slot: lib/emulator/link/link_ring.h).
// - MbufExtra, in a registered mbuf dynamic field: the ingress port (PFC and
//   BFC account by ingress), and what BFC and Floodgate keep with a packet
//   from ingress to departure.

#include <rte_mbuf.h>
#include <rte_mbuf_dyn.h>

#include <cstdint>
#include <string>

namespace sluice {

struct MbufMeta {
  uint16_t egress_port;  // global port index
  uint8_t l3_offset;     // < 128 (at most 14 + 2 x 4 VLAN + 6 shim)
  uint8_t queue;         // < 64
  bool ecn_capable;
  bool detour = false;       // DIBS: admit at egress_port as a detour (another lcore chose it)
  bool has_detours = false;  // DIBS: MbufExtra::detours holds its count (else 0)
};

inline void mbuf_meta_set(rte_mbuf* m, const MbufMeta& meta) {
  m->hash.usr = uint32_t{meta.egress_port} | ((uint32_t{meta.l3_offset} & 0x7F) << 16) |
                ((uint32_t{meta.queue} & 0x3F) << 23) | (uint32_t{meta.ecn_capable} << 29) |
                (uint32_t{meta.detour} << 30) | (uint32_t{meta.has_detours} << 31);
}

inline MbufMeta mbuf_meta_get(const rte_mbuf* m) {
  const uint32_t v = m->hash.usr;
  return MbufMeta{static_cast<uint16_t>(v & 0xFFFF),
                  static_cast<uint8_t>((v >> 16) & 0x7F),
                  static_cast<uint8_t>((v >> 23) & 0x3F),
                  ((v >> 29) & 1) != 0,
                  ((v >> 30) & 1) != 0,
                  (v >> 31) != 0};
}

// A frame a share of a port received (workers[].receive) that only the
// port's owner may handle (ARP, MAC control, sluice control) crosses the
// ring with this in place of the metadata (no port has index 0xFFFF) and
// its ingress port in hash.fdir.hi.
inline constexpr uint32_t kReceivedFrame = 0xFFFF;

inline void mbuf_mark_received(rte_mbuf* m, uint16_t ingress) {
  m->hash.usr = kReceivedFrame;
  m->hash.fdir.hi = ingress;
}

inline bool mbuf_is_received(const rte_mbuf* m) { return m->hash.usr == kReceivedFrame; }

inline uint16_t mbuf_received_port(const rte_mbuf* m) {
  return static_cast<uint16_t>(m->hash.fdir.hi);
}

// TmPacket::aux as sluice uses it: kTmAuxGenerated for frames sluice built,
// otherwise 0, or the ingress port index + 1 when the packet is counted
// against that ingress for PFC (uncounted again when it leaves).
constexpr uint16_t kTmAuxGenerated = 0x8000;

struct MbufExtra {
  // Forward writes the 64-bit flow hash here (flow); BFC's entry (at
  // admission) and Floodgate's fields (in its forward step) overwrite it
  // later. BFC, Floodgate and queueing by flow never run on one switch
  // (config_validate). The registered field must leave room for the PMDs'
  // own dynamic fields (net_pcap's timestamp): 24 bytes in all.
  union {
    struct {
      uint32_t flow_hash;  // the 5-tuple hash (set at ingress)
      uint32_t entry;      // flow-table index (set at admission)
    } bfc;
    struct {
      uint32_t lo;  // bfc.flow_hash
      uint32_t hi;  // the rest of the 64-bit hash, where a port queues by flow
    } flow;
    struct {
      uint32_t dst;    // destination IPv4, host order (set at ingress)
      uint16_t bytes;  // the frame's bytes as windows count them
    } fg;
  };
  uint16_t ingress;         // global index of the port the frame arrived on
  uint16_t upstream_queue;  // BFC: from the received shim, else kNoUpstreamQueue
  uint8_t bfc_flagged;      // BFC: counted in a pause counter until it leaves
  uint8_t pfc_priority;     // PFC: the priority its bytes count under at ingress
  uint8_t detours;          // DIBS: detours taken so far (valid when MbufMeta::has_detours)
};
static_assert(sizeof(MbufExtra) <= 24, "keep room for the PMDs' dynamic fields");

extern int g_mbuf_extra_offset;

// Registers the dynamic field; call once after EAL init, before any pool is used.
bool register_mbuf_extra(std::string* error);

inline MbufExtra* mbuf_extra(rte_mbuf* m) {
  return RTE_MBUF_DYNFIELD(m, g_mbuf_extra_offset, MbufExtra*);
}

}  // namespace sluice
