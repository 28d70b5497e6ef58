#pragma once
// IPv4 header checksum and the in-place rewrites done while forwarding:
// TTL decrement and ECN marking, both with the incremental checksum update of
// RFC 1624 eqn. 3, HC' = ~(~HC + ~m + m'), which (unlike eqn. 2) never yields
// 0xFFFF where a full recomputation yields 0x0000.
//
// `ip` points at the first byte of a validated IPv4 header (see
// packet_parser.h); these functions touch only its first 12 bytes.

#include <bit>
#include <cstdint>
#include <cstring>

#include "lib/net/byte_order.h"

namespace sluice {

inline constexpr unsigned kIpv4ChecksumOffset = 10;
inline constexpr unsigned kIpv4TtlOffset = 8;
inline constexpr unsigned kIpv4TosOffset = 1;

inline constexpr uint8_t kEcnNotEct = 0b00;
inline constexpr uint8_t kEcnEct1 = 0b01;
inline constexpr uint8_t kEcnEct0 = 0b10;
inline constexpr uint8_t kEcnCe = 0b11;

// Folds a sum of 16-bit words (with carries) to 16 bits with end-around carry.
inline uint16_t csum_fold(uint64_t sum) {
  sum = (sum & 0xFFFFFFFFu) + (sum >> 32);
  sum = (sum & 0xFFFFu) + (sum >> 16);
  sum = (sum & 0xFFFFu) + (sum >> 16);
  sum = (sum & 0xFFFFu) + (sum >> 16);
  return static_cast<uint16_t>(sum);
}

// One's complement sum of `len` bytes (a multiple of 4) as big-endian 16-bit
// words. Sums native 32-bit words and swaps once at the end: the one's
// complement sum is independent of byte order (RFC 1071 §2(B)).
inline uint16_t ipv4_ones_sum(const uint8_t* p, unsigned len) {
  uint64_t sum = 0;
  for (unsigned i = 0; i < len; i += 4) {
    uint32_t w;
    std::memcpy(&w, p + i, sizeof w);
    sum += w;
  }
  uint16_t folded = csum_fold(sum);
  if constexpr (std::endian::native == std::endian::little) return __builtin_bswap16(folded);
  return folded;
}

// The checksum field value (host order, store with store_be16 at offset 10)
// that makes the header valid; the current checksum field is ignored.
inline uint16_t ipv4_header_checksum(const uint8_t* ip, unsigned ihl_bytes) {
  uint32_t sum = ipv4_ones_sum(ip, ihl_bytes);
  sum += static_cast<uint16_t>(~load_be16(ip + kIpv4ChecksumOffset));  // cancel the field
  return static_cast<uint16_t>(~csum_fold(sum));
}

// True when the header's checksum is correct (the sum over it is -0).
inline bool ipv4_checksum_ok(const uint8_t* ip, unsigned ihl_bytes) {
  return ipv4_ones_sum(ip, ihl_bytes) == 0xFFFF;
}

// RFC 1624 eqn. 3 for one 16-bit word of the header changing old -> new.
inline void ipv4_checksum_replace16(uint8_t* ip, uint16_t old_word, uint16_t new_word) {
  uint32_t sum = static_cast<uint16_t>(~load_be16(ip + kIpv4ChecksumOffset));
  sum += static_cast<uint16_t>(~old_word);
  sum += new_word;
  store_be16(ip + kIpv4ChecksumOffset, static_cast<uint16_t>(~csum_fold(sum)));
}

// TTL - 1 and checksum update. The caller has checked TTL > 1 (the parser
// drops TTL <= 1 with kTtlExpired). RFC 1624 eqn. 3 for the TTL | protocol
// word m falling by 0x0100: ~m + m' is 0xFEFF for every m >= 0x0100, so
// HC' = ~(~HC + 0xFEFF), where the sum is at most 0x1FEFE and one fold
// ends the carries.
inline void ipv4_decrement_ttl(uint8_t* ip) {
  --ip[kIpv4TtlOffset];
  uint32_t sum = static_cast<uint16_t>(~load_be16(ip + kIpv4ChecksumOffset)) + 0xFEFFu;
  sum = (sum & 0xFFFFu) + (sum >> 16);
  store_be16(ip + kIpv4ChecksumOffset, static_cast<uint16_t>(~sum));
}

// The ECN field (low two bits of the TOS byte).
inline uint8_t ipv4_ecn(const uint8_t* ip) { return ip[kIpv4TosOffset] & 0b11; }

// ECT(0), ECT(1) or CE: the sender understands ECN.
inline bool ipv4_ecn_capable(const uint8_t* ip) { return ipv4_ecn(ip) != kEcnNotEct; }

// Sets the ECN field to `ecn` (two bits) and updates the checksum. It does
// exactly what it is told: it will overwrite CE with anything. Never
// downgrading CE, and marking only ECN-capable packets, is the caller's rule
// (the marking policy decides, e.g. TCD writes UE only if the packet is not CE).
inline void ipv4_set_ecn(uint8_t* ip, uint8_t ecn) {
  uint16_t old_word = load_be16(ip);  // version/IHL | TOS
  uint16_t new_word = static_cast<uint16_t>((old_word & ~0b11u) | (ecn & 0b11u));
  if (new_word == old_word) return;
  store_be16(ip, new_word);
  ipv4_checksum_replace16(ip, old_word, new_word);
}

}  // namespace sluice
