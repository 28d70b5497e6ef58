#pragma once
// The 64-bit key FlowletTable tracks a flow by: the IPv4 5-tuple mixed so
// that every input bit reaches every output bit (two rounds of the
// splitmix64 finaliser). docs/mechanisms/flowtune.md ("Edge switches").

#include <cstdint>

namespace sluice {

constexpr uint64_t mix64(uint64_t z) {
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ULL;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBULL;
  return z ^ (z >> 31);
}

// Addresses and ports in host order; ports are 0 for protocols without them.
constexpr uint64_t flowlet_key(uint32_t src_ip, uint32_t dst_ip, uint8_t proto, uint16_t src_port,
                               uint16_t dst_port) {
  const uint64_t addrs = (uint64_t(src_ip) << 32) | dst_ip;
  const uint64_t rest = (uint64_t(proto) << 32) | (uint64_t(src_port) << 16) | dst_port;
  return mix64(mix64(addrs) ^ rest);
}

}  // namespace sluice
