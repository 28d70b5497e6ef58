#pragma once
// What a validation step sees of a loaded configuration: the model, where
// each key was written, the errors found so far, and the switches and ports
// by name. The validator (config_validate.cc) runs the core's checks with it,
// and each section's own checks (lib/config/config_section.h) get it too.

#include <cstddef>
#include <map>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "lib/config/config.h"
#include "lib/config/config_loader.h"
#include "lib/config/config_validate.h"

namespace sluice {

// Dotted key paths: item_key("switches[0]", "ports", 1) is
// "switches[0].ports[1]"; an empty parent gives "ports[1]".
std::string item_key(const std::string& parent, const char* list, size_t i);
inline std::string switch_key(size_t s) { return item_key("", "switches", s); }
inline std::string port_key(size_t s, size_t p) { return item_key(switch_key(s), "ports", p); }

class ConfigCheck {
 public:
  ConfigCheck(const Config& c, const KeyLines& lines, std::vector<ConfigError>* errors,
              std::vector<ConfigError>* notes)
      : c_(c), lines_(lines), errors_(errors), notes_(notes) {}

  const Config& config() const { return c_; }

  // An error (a note: accepted, but worth saying) at the line `key` was
  // written on, or its nearest written parent's.
  void error(const std::string& key, std::string message);
  void note(const std::string& key, std::string message);

  // Whether `key` itself was written in the file.
  bool written(const std::string& key) const { return lines_.count(key) != 0; }

  // An error already reported at `key`; at `key` or at a key in its map
  // (key.something); at `key` or at one of its list items (key[i]).
  bool has_error(const std::string& key) const;
  bool has_error_at_or_in(const std::string& key) const;
  bool has_error_under(const std::string& key) const;

  // Names, as the validator indexes them: false if the name was taken.
  bool add_switch(const std::string& name, size_t s);
  bool add_port(size_t s, const std::string& name, size_t p);
  bool knows_switch(const std::string& name) const { return switch_index_.count(name) != 0; }
  // (switch, port) indices of "sw/port", if both exist.
  std::optional<std::pair<size_t, size_t>> find_port(const std::string& sw,
                                                     const std::string& port) const;

 private:
  const Config& c_;
  const KeyLines& lines_;
  std::vector<ConfigError>* errors_;
  std::vector<ConfigError>* notes_;
  std::map<std::string, size_t> switch_index_;
  std::map<size_t, std::map<std::string, size_t>> port_index_;
};

}  // namespace sluice
