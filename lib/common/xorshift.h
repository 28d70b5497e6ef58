#pragma once
// xorshift64* (Vigna, "An experimental exploration of Marsaglia's xorshift
// generators, scrambled"): a few cycles per draw, deterministic for a seed, so
// every random rule (RED, link loss, random queue choice) replays exactly.

#include <cstdint>

namespace sluice {

class Xorshift64 {
 public:
  explicit Xorshift64(uint64_t seed) : state_(seed == 0 ? 0x9E3779B97F4A7C15ull : seed) {}

  uint64_t next() {
    state_ ^= state_ >> 12;
    state_ ^= state_ << 25;
    state_ ^= state_ >> 27;
    return state_ * 0x2545F4914F6CDD1Dull;
  }
  // Uniform in [0, 2^32).
  uint32_t next32() { return static_cast<uint32_t>(next() >> 32); }
  // True with probability p32 / 2^32.
  bool chance(uint64_t p32) { return next32() < p32; }

 private:
  uint64_t state_;
};

// Probability in [0, 1] as a 32-bit fixed-point threshold for Xorshift64::chance.
inline uint64_t probability32(double p) {
  if (p <= 0) return 0;
  if (p >= 1) return uint64_t{1} << 32;
  return static_cast<uint64_t>(p * 4294967296.0);
}

}  // namespace sluice
