#include <rte_cycles.h>

#include "switch/runtime.h"

namespace sluice {

TscClock::TscClock(uint64_t hz)
    : mult_(static_cast<uint64_t>((static_cast<unsigned __int128>(1'000'000'000) << kShift) / hz)) {}

uint64_t TscClock::now_ns() const { return to_ns(rte_rdtsc()); }

}  // namespace sluice
