#pragma once
// BFC pause threshold: Th = hop_rtt x port_rate / N_active, in bytes.
// N_active = non-empty, non-paused queues of the egress port, at least 1, so
// the active queues together hold about one hop-BDP. hop_rtt = the largest
// one-hop RTT among the switch-facing ports (the slowest pause to take
// effect; lib/mechanisms/bfc/hop_rtt.h).
// docs/mechanisms/bfc.md ("Pause threshold").

#include <algorithm>
#include <bit>
#include <cstdint>

namespace sluice {

constexpr uint32_t active_queue_count(uint64_t nonempty_mask, uint64_t paused_mask) {
  return static_cast<uint32_t>(std::popcount(nonempty_mask & ~paused_mask));
}

// Saturates at UINT64_MAX (a hop RTT near 2^64 ns times a fast port).
constexpr uint64_t pause_threshold_bytes(uint64_t hop_rtt_ns, uint64_t port_rate_bps,
                                         uint32_t n_active) {
  const unsigned __int128 bits = static_cast<unsigned __int128>(hop_rtt_ns) * port_rate_bps;
  const unsigned __int128 bytes = bits / (8'000'000'000ull * std::max<uint32_t>(n_active, 1));
  return bytes > UINT64_MAX ? UINT64_MAX : static_cast<uint64_t>(bytes);
}

}  // namespace sluice
