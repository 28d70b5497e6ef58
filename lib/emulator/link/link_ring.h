#pragma once
// How many frames an internal link's ring holds (one ring per direction):
// twice the frames of minimum size (84 wire bytes) that fit in flight over
// the delay plus 50 us of slack, a power of two from 1024 to 2^20. A full
// ring holds frames back at the sender, never drops.

#include <cstdint>

namespace sluice {

constexpr uint32_t link_ring_size(uint64_t rate_bps, uint64_t delay_ns) {
  const double frames =
      2.0 * (rate_bps == 0 ? 100e9 : double(rate_bps)) * ((delay_ns + 50'000) * 1e-9) / (84 * 8);
  uint32_t size = 1024;
  while (size < frames && size < (1u << 20)) size <<= 1;
  return size;
}

}  // namespace sluice
