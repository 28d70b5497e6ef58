#pragma once
// When a frame sent onto an emulated point-to-point link arrives at the far
// end: it starts serialising when the wire is free (or now, if later), takes
// (bytes + overhead) * 8 / rate to serialise, then the propagation delay.
// Frames therefore arrive in order and never closer than their serialisation
// time, whatever bursts the sender hands over. Time in ns; the wire's
// occupancy keeps the fraction of a ns below them (in 1/1024 ps), so the
// long-run rate is exact.

#include <cstdint>

namespace sluice {

// x / 1000 for any x < 2^96 whose quotient fits 64 bits, without a 128-bit
// division: GCC turns `unsigned __int128 / 1000` into a call to libgcc's
// __udivti3 (once per frame on every link), while the two 64-bit divisions
// by the constant here compile to multiplications. x = hi * 2^32 + lo, and
// (hi % 1000) * 2^32 + lo < 1000 * 2^32, so its quotient is below 2^32.
constexpr uint64_t divide_by_1000(unsigned __int128 x) {
  const uint64_t hi = static_cast<uint64_t>(x >> 32);
  const uint64_t lo = static_cast<uint64_t>(x) & 0xFFFFFFFFu;
  return ((hi / 1000) << 32) + (((hi % 1000) << 32) + lo) / 1000;
}

// 32 bytes, so that a link direction's ring and timing share one line
// (switch/runtime/runtime.h, LinkDirection).
class LinkTiming {
 public:
  // rate_bps 0: no serialisation time (only the delay). overhead_bytes: at
  // most 65,535 (the configuration allows 256).
  LinkTiming(uint64_t rate_bps, uint32_t overhead_bytes, uint64_t delay_ns)
      : ps_per_byte_x1024_(rate_bps == 0 ? 0 : (8'000'000'000'000ull << 10) / rate_bps),
        delay_ns_(delay_ns),
        overhead_bytes_(static_cast<uint16_t>(overhead_bytes)),
        narrow_(ps_per_byte_x1024_ <= (UINT64_MAX - kUnitsPerNs) / kMaxWireBytes) {}

  // Due time (ns) at the far end of a frame of `bytes` handed over at now_ns.
  // The wire's finish is wire_free_ns_ + wire_free_rest_ / kUnitsPerNs, the
  // rest below one ns: it is before now_ns exactly when wire_free_ns_ is.
  uint64_t depart(uint64_t now_ns, uint32_t bytes) {
    if (wire_free_ns_ < now_ns) {
      wire_free_ns_ = now_ns;
      wire_free_rest_ = 0;
    }
    const uint64_t wire_bytes = uint64_t{bytes} + overhead_bytes_;
    uint64_t ns;
    if (narrow_) [[likely]] {
      const uint64_t t = wire_free_rest_ + wire_bytes * ps_per_byte_x1024_;
      ns = t / kUnitsPerNs;
      wire_free_rest_ = static_cast<uint32_t>(t % kUnitsPerNs);
    } else {
      const unsigned __int128 t =
          wire_free_rest_ + static_cast<unsigned __int128>(wire_bytes) * ps_per_byte_x1024_;
      ns = divide_by_1000(t >> 10);
      wire_free_rest_ = static_cast<uint32_t>(static_cast<uint64_t>(t) - ns * kUnitsPerNs);
    }
    wire_free_ns_ += ns;
    return wire_free_ns_ + delay_ns_;
  }

  uint64_t delay_ns() const { return delay_ns_; }

  // When the wire finishes the last frame handed over (ns, rounded down).
  uint64_t wire_free_ns() const { return wire_free_ns_; }
  // Serialisation time already committed to the wire beyond now_ns: what a
  // pause can no longer hold back.
  uint64_t backlog_ns(uint64_t now_ns) const {
    const uint64_t free_ns = wire_free_ns();
    return free_ns > now_ns ? free_ns - now_ns : 0;
  }
  // Serialisation time of a frame of `bytes`.
  uint64_t serialisation_ns(uint32_t bytes) const {
    return divide_by_1000(
        static_cast<unsigned __int128>(bytes + overhead_bytes_) * ps_per_byte_x1024_ >> 10);
  }

 private:
  static constexpr uint64_t kUnitsPerNs = 1000 << 10;  // in 1/1024 ps
  static constexpr uint64_t kMaxWireBytes = uint64_t{UINT32_MAX} + UINT16_MAX;

  uint64_t ps_per_byte_x1024_;  // picoseconds per byte, 10 fractional bits
  uint64_t delay_ns_;
  uint64_t wire_free_ns_ = 0;    // when the wire finishes its last frame
  uint32_t wire_free_rest_ = 0;  // and the rest of a ns, below kUnitsPerNs
  uint16_t overhead_bytes_;
  // Any frame's serialisation in 1/1024 ps fits 64 bits (rates from about
  // 2 Mb/s): depart() needs no 128-bit arithmetic.
  bool narrow_;
};

static_assert(sizeof(LinkTiming) == 32);

}  // namespace sluice
