#pragma once
// Checks that span several parts of a configuration: names unique, internal
// links that match at both ends, routes and workers naming real ports, worker
// lcores, capture files, the clock; and, each at its place among those, the
// checks of every section outside the core (lib/config/config_section.h:
// a mechanism's or the emulator's). Per-key checks (types, units, ranges)
// happen while loading.

#include <map>
#include <string>
#include <vector>

#include "lib/config/config.h"
#include "lib/config/config_loader.h"

namespace sluice {

// Dotted key path -> 1-based line where it was written. A lookup for a key
// that was not written falls back to its nearest written parent.
using KeyLines = std::map<std::string, int>;
int line_for(const KeyLines& lines, std::string path);

// With a transport section, a capture-file host port without an rx capture
// is an emulated host that runs the transport (docs/transports.md).
bool is_transport_host_port(const Config& c, const PortConfig& p);

// Appends one error per problem found, and to `notes` (if given) one per
// combination that is accepted but worth saying; uses config.file as the file
// name.
void validate_config(const Config& config, const KeyLines& lines, std::vector<ConfigError>* errors,
                     std::vector<ConfigError>* notes = nullptr);

}  // namespace sluice
