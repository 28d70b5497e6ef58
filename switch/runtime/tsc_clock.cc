#include <rte_cycles.h>
#include <time.h>

#include "switch/runtime/runtime.h"

namespace sluice {

TscClock::TscClock(uint64_t hz)
    : mult_(static_cast<uint64_t>((static_cast<unsigned __int128>(1'000'000'000) << kShift) / hz)) {}

uint64_t TscClock::now_ns() const { return to_ns(rte_rdtsc()); }

// EAL's TSC frequency can be a nominal figure (0.2% off on the machines this
// was written on, which a shaper promising ±1% cannot afford), so it is
// measured against CLOCK_MONOTONIC_RAW over 200 ms.
uint64_t calibrate_tsc_hz() {
  auto mono_ns = [] {
    timespec ts;
    clock_gettime(CLOCK_MONOTONIC_RAW, &ts);
    return uint64_t(ts.tv_sec) * 1'000'000'000ull + uint64_t(ts.tv_nsec);
  };
  const uint64_t t0 = mono_ns(), c0 = rte_rdtsc();
  timespec pause{0, 200'000'000};
  nanosleep(&pause, nullptr);
  const uint64_t t1 = mono_ns(), c1 = rte_rdtsc();
  if (t1 <= t0 || c1 <= c0) return rte_get_tsc_hz();
  return static_cast<uint64_t>((static_cast<unsigned __int128>(c1 - c0) * 1'000'000'000ull) /
                               (t1 - t0));
}

}  // namespace sluice
