#pragma once
// Turns a validated configuration into a running-ready Runtime after EAL is
// initialised: mbuf pool, ethdev ports, worker lcores and their rings, routing
// tables and traffic managers.

#include <string>

#include "switch/runtime/runtime.h"

namespace sluice {

// Returns an empty string on success, otherwise what went wrong.
std::string build_runtime(Runtime& rt);

// Stops and closes the ethdev ports and frees the tables (after workers stop).
void release_runtime(Runtime& rt);

}  // namespace sluice
