#pragma once
// DPDK telemetry commands under /sluice/ (read with dpdk-telemetry.py):
//   /sluice/ports            every port's counters, keyed "switch/port"
//   /sluice/port,SW/PORT     one port's counters, drops by reason and queue depths
//   /sluice/lcores           worker lcores with their ports and busy cycles

#include "switch/runtime/runtime.h"

namespace sluice {

void register_telemetry(const Runtime& rt);

}  // namespace sluice
