#pragma once
// Loads a YAML configuration into the model and validates it. Every error names
// the file, line and key and says what was expected, e.g.
//   conf/x.yaml:12: switches[0].ports[1].rate: expected a rate such as 10Gbps, got "10 furlongs"

#include <string>
#include <string_view>
#include <vector>

#include "lib/config/config.h"

namespace sluice {

struct ConfigError {
  std::string file;
  int line = 0;      // 1-based; 0 when not tied to a line
  std::string key;   // dotted path, e.g. switches[0].ports[1].rate
  std::string message;
  std::string to_string() const;  // "file:line: key: message"
};

struct ConfigResult {
  Config config;
  std::vector<ConfigError> errors;  // empty means valid
  // Accepted, but a user may not expect what it does (e.g. TCD with nothing
  // to pause it); same form as errors, for --check to print.
  std::vector<ConfigError> notes;
  bool ok() const { return errors.empty(); }
};

ConfigResult load_config_file(const std::string& path);
ConfigResult load_config_string(std::string_view yaml, const std::string& file_name);

}  // namespace sluice
