#pragma once
// What the ingress lcore learns about a packet and the egress lcore needs,
// carried in the mbuf's 32-bit hash.usr field across inter-lcore rings:
// egress port (16 bits), L3 offset (8 bits), data queue (7 bits), ECN-capable
// (1 bit). RX hash values are not used after parsing, so the field is free.

#include <rte_mbuf.h>

#include <cstdint>

namespace sluice {

struct MbufMeta {
  uint16_t egress_port;  // global port index
  uint8_t l3_offset;
  uint8_t queue;
  bool ecn_capable;
};

inline void mbuf_meta_set(rte_mbuf* m, const MbufMeta& meta) {
  m->hash.usr = uint32_t{meta.egress_port} | (uint32_t{meta.l3_offset} << 16) |
                (uint32_t{meta.queue} & 0x7F) << 24 | (uint32_t{meta.ecn_capable} << 31);
}

inline MbufMeta mbuf_meta_get(const rte_mbuf* m) {
  const uint32_t v = m->hash.usr;
  return MbufMeta{static_cast<uint16_t>(v & 0xFFFF), static_cast<uint8_t>((v >> 16) & 0xFF),
                  static_cast<uint8_t>((v >> 24) & 0x7F), (v >> 31) != 0};
}

}  // namespace sluice
