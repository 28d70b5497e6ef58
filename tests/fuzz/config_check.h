#pragma once
// One check of the YAML configuration loader (lib/config/config_loader.h) on
// arbitrary text, shared by the libFuzzer target (config_fuzz.cc) and the
// corpus replay in the unit tests. Whatever the text, the loader returns
// (no exception escapes, no crash); every error and note names the file, a
// line inside the text (or 0) and a message; type errors are the reader's own,
// never a yaml-cpp conversion exception ("YAML error: ..."); and loading the
// same text twice gives the same errors. Returns false on a violation.

#include <algorithm>
#include <cstdint>
#include <string>
#include <string_view>

#include "lib/config/config_loader.h"

namespace sluice {

inline bool check_config_loader(const uint8_t* data, uint32_t size) {
  const std::string file = "fuzz.yaml";
  const std::string_view text(reinterpret_cast<const char*>(data), data == nullptr ? 0 : size);
  ConfigResult r;
  try {
    r = load_config_string(text, file);
  } catch (...) {
    return false;
  }
  const int lines = static_cast<int>(std::count(text.begin(), text.end(), '\n')) + 1;
  for (const auto* list : {&r.errors, &r.notes}) {
    for (const ConfigError& e : *list) {
      if (e.file != file || e.message.empty() || e.line < 0 || e.line > lines + 1) return false;
      if (e.message.rfind("YAML error: ", 0) == 0) return false;
      if (e.to_string().rfind(file, 0) != 0) return false;
    }
  }
  if (r.config.file != file) return false;
  const ConfigResult again = load_config_string(text, file);
  if (again.errors.size() != r.errors.size() || again.notes.size() != r.notes.size()) return false;
  for (size_t i = 0; i < r.errors.size(); ++i) {
    if (again.errors[i].to_string() != r.errors[i].to_string()) return false;
  }
  return true;
}

}  // namespace sluice
