#pragma once
// The config tests' view of a load: each error as ConfigError::to_string()
// prints it ("file:line: key: message").
#include <string>
#include <vector>

#include "lib/config/config_loader.h"

namespace sluice {

inline std::vector<std::string> error_strings(const ConfigResult& r) {
  std::vector<std::string> out;
  for (const ConfigError& e : r.errors) out.push_back(e.to_string());
  return out;
}

}  // namespace sluice
