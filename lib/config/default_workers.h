#pragma once
// Which worker owns each port when the configuration has no `workers:`
// section: round-robin over the ports in configuration order (switch by
// switch, port by port), except that ports a section says one lcore must
// own together (SwitchSection::one_lcore, lib/config/config_section.h; a
// Floodgate switch's switch-facing ports, whose window table has one
// writer) all go to the worker the first of them gets.
// docs/configuration.md, "workers[]".

#include <vector>

#include "lib/config/config.h"

namespace sluice {

// The worker slot (0..worker_count-1) of every port, in configuration order.
std::vector<unsigned> default_port_workers(const Config& config, unsigned worker_count);

}  // namespace sluice
