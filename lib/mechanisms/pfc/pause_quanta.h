#pragma once
// Pause quanta and time. One quantum is 512 bit times at the link rate
// (802.3 clause 31 / Annex 31B), so its length depends on the port's speed:
// 51.2 ns at 10 Gb/s, 5.12 ns at 100 Gb/s.

#include <cstdint>

namespace sluice {

inline constexpr uint64_t kBitsPerQuantum = 512;
inline constexpr uint16_t kMaxQuanta = 0xFFFF;

// Pause time of `quanta` at rate_bps (> 0), rounded up to a whole ns so a
// pause never ends early. Exact: 65535 x 512 x 1e9 fits in 64 bits.
constexpr uint64_t quanta_to_ns(uint16_t quanta, uint64_t rate_bps) {
  const uint64_t bit_ns = uint64_t{quanta} * kBitsPerQuantum * 1'000'000'000ull;
  return (bit_ns + rate_bps - 1) / rate_bps;
}

// Fewest quanta whose pause time at rate_bps (> 0) covers ns, saturating at
// 0xFFFF. quanta_to_ns(ns_to_quanta(t, r), r) >= t whenever t is reachable.
constexpr uint16_t ns_to_quanta(uint64_t ns, uint64_t rate_bps) {
  const unsigned __int128 bits = static_cast<unsigned __int128>(ns) * rate_bps;
  const unsigned __int128 per_quantum = kBitsPerQuantum * 1'000'000'000ull;
  const unsigned __int128 q = (bits + per_quantum - 1) / per_quantum;
  return q >= kMaxQuanta ? kMaxQuanta : static_cast<uint16_t>(q);
}

}  // namespace sluice
