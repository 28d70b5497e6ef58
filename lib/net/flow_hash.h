#pragma once
// The 5-tuple hash that picks ECMP members (and indexes per-flow tables).
// Deterministic across runs, builds and switches, so tests can predict it; the
// exact formula is in docs/packet-processing.md ("Flow hash"):
//
//   a = src_ip << 32 | dst_ip                                  (64 bits)
//   b = proto << 32 | src_port << 16 | dst_port                (64 bits)
//   h = fmix64(a ^ (b * 0x9E3779B97F4A7C15 mod 2^64)) >> 32
//
// Multiplying b by an odd constant is a bijection that spreads the port bits
// over the whole word before they meet the addresses; fmix64 (MurmurHash3's
// 64-bit finaliser, a bijection with full avalanche) mixes the result.

#include <cstdint>

namespace sluice {

inline constexpr uint64_t kFlowHashPortMultiplier = 0x9E3779B97F4A7C15ull;

// MurmurHash3 fmix64.
constexpr uint64_t fmix64(uint64_t k) {
  k ^= k >> 33;
  k *= 0xFF51AFD7ED558CCDull;
  k ^= k >> 33;
  k *= 0xC4CEB9FE1A85EC53ull;
  k ^= k >> 33;
  return k;
}

// All arguments in host byte order.
constexpr uint32_t flow_hash(uint32_t src_ip, uint32_t dst_ip, uint8_t proto, uint16_t src_port,
                             uint16_t dst_port) {
  const uint64_t a = static_cast<uint64_t>(src_ip) << 32 | dst_ip;
  const uint64_t b =
      static_cast<uint64_t>(proto) << 32 | static_cast<uint64_t>(src_port) << 16 | dst_port;
  return static_cast<uint32_t>(fmix64(a ^ (b * kFlowHashPortMultiplier)) >> 32);
}

// One hash for both directions of a flow: the endpoints in a fixed order
// (the lower address, or the lower port between equal addresses, first).
constexpr uint32_t symmetric_flow_hash(uint32_t src_ip, uint32_t dst_ip, uint8_t proto,
                                       uint16_t src_port, uint16_t dst_port) {
  const bool in_order = src_ip < dst_ip || (src_ip == dst_ip && src_port <= dst_port);
  return in_order ? flow_hash(src_ip, dst_ip, proto, src_port, dst_port)
                  : flow_hash(dst_ip, src_ip, proto, dst_port, src_port);
}

// Member index in [0, n) for n >= 1: multiply-shift, no division. It is
// driven by the hash's high bits, so a table indexed by the low bits (the BFC
// flow table) is not correlated with the ECMP choice.
constexpr uint32_t ecmp_pick(uint32_t hash, uint32_t n) {
  return static_cast<uint32_t>((static_cast<uint64_t>(hash) * n) >> 32);
}

}  // namespace sluice
