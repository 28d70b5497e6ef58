#pragma once
// Takes page faults out of the data path. With --no-huge, DPDK's memory is
// ordinary anonymous memory that the kernel maps page by page on first touch,
// so a worker that reaches an mbuf (or a queue) nobody used yet stalls on a
// page fault; under memory pressure pages may also be reclaimed and faulted
// back later. Before the workers start, every page of the mbuf pool is
// touched and the process's memory is locked (docs/testbed.md, "Stalls the worker avoids").

#include <string>

#include "switch/runtime/runtime.h"

namespace sluice {

// Touches the mbuf pool's pages and locks current and future memory. Returns
// a warning (empty when all went well); a failure is not fatal, only slower.
std::string prefault_memory(Runtime& rt);

}  // namespace sluice
