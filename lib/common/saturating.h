#pragma once
// uint64 arithmetic that stops at UINT64_MAX instead of wrapping, for times
// and intervals built from configured durations (any up to UINT64_MAX ns):
// a deadline that would wrap past 2^64 means "never", not "long ago".

#include <cstdint>

namespace sluice {

constexpr uint64_t sat_add(uint64_t a, uint64_t b) {
  uint64_t r = 0;
  return __builtin_add_overflow(a, b, &r) ? UINT64_MAX : r;
}

constexpr uint64_t sat_mul(uint64_t a, uint64_t b) {
  uint64_t r = 0;
  return __builtin_mul_overflow(a, b, &r) ? UINT64_MAX : r;
}

}  // namespace sluice
