#pragma once
// Turns a validated configuration into a running-ready Runtime after EAL is
// initialised: mbuf pool, ethdev ports, worker lcores and their rings, routing
// tables and traffic managers.

#include <chrono>
#include <string>

#include "switch/runtime/runtime.h"

namespace sluice {

// Returns an empty string on success, otherwise what went wrong.
std::string build_runtime(Runtime& rt);

// Stops and closes the ethdev ports and frees the tables (after workers stop).
// A net_memif port is closed no sooner than kMemifCloseGrace after
// `halted` (when the workers stopped): DPDK 22.11's memif unmaps the shared
// rings on its interrupt thread as soon as the peer closes, even while the
// peer's worker reads them, so two processes stopped together must both
// have halted before either closes (docs/deploy.md, "Two processes"). It
// is stopped and closed on EAL's interrupt thread, never beside memif's own
// handling of the peer's disconnect there (switch/runtime/interrupt_thread.h).
inline constexpr std::chrono::milliseconds kMemifCloseGrace{500};
void release_runtime(Runtime& rt, std::chrono::steady_clock::time_point halted);

}  // namespace sluice
