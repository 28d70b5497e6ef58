#pragma once
// Which worker owns each port when the configuration has no `workers:`
// section: round-robin over the ports in configuration order (switch by
// switch, port by port), except that all switch-facing ports of a
// Floodgate switch go to the worker its first one gets, because that
// switch's window table has one writer (docs/mechanisms/floodgate.md, "One
// writer"). docs/configuration.md, "workers[]".

#include <vector>

#include "lib/config/config.h"

namespace sluice {

// The worker slot (0..worker_count-1) of every port, in configuration order.
std::vector<unsigned> default_port_workers(const Config& config, unsigned worker_count);

}  // namespace sluice
