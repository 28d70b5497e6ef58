#pragma once
// A configuration section that the core does not own: a mechanism's
// (lib/mechanisms/<m>/<m>_config.cc) or the emulator's (lib/emulator/...).
// Each folder parses and validates its own sections and declares them in one
// ConfigSections; lib/mechanisms/sections.cc and lib/emulator/sections.cc
// list those, and the loader and the validator go through the lists
// (all_config_sections()) without knowing any section by name
// (docs/configuration.md, "Where each section is read").
//
// Order is part of the behaviour: a map's keys are the core's, with the
// sections' keys in list order at one place among them (a switch's after
// ecn and before ports, a port's after hop_rtt, the top level's after
// workers), and the sections are parsed and validated in that order too, so
// errors come out in the same order as they always did.

#include <cstddef>
#include <span>
#include <string>
#include <string_view>

#include "lib/config/config.h"

namespace sluice {

class ConfigCheck;
class YamlReader;
struct Field;

// A key of the file's top level, e.g. flowtune_allocator.
struct TopSection {
  std::string_view key;  // empty: the folder has none
  // Reads the key's value (present in the file) into the model.
  void (*parse)(YamlReader& r, const Field& f, Config* c) = nullptr;
  // Checks that need the whole configuration; after the core's checks.
  void (*validate)(ConfigCheck& k) = nullptr;
};

// A key of each switch map, e.g. pfc.
struct SwitchSection {
  std::string_view key;  // empty: the folder has none
  void (*parse)(YamlReader& r, const Field& f, SwitchConfig* sw) = nullptr;
  // Checks of switch s (ranges across keys, other mechanisms on the same
  // switch, the switch's ports).
  void (*validate)(ConfigCheck& k, size_t s) = nullptr;
  // Checks of an internal link between switches a and b, reported at `key`
  // (the link key of its first end), once per link.
  void (*validate_link)(ConfigCheck& k, const std::string& key, const SwitchConfig& a,
                        const SwitchConfig& b) = nullptr;
  // Ports of a switch that one worker lcore must own together (state with
  // one writer): default workers keep them together, and given workers
  // that split them are refused with one_lcore_error(switch, the port that
  // is not with the others, the worker key of the others).
  bool (*one_lcore)(const SwitchConfig& sw, const PortConfig& port) = nullptr;
  std::string (*one_lcore_error)(const SwitchConfig& sw, const PortConfig& stray,
                                 const std::string& others) = nullptr;
  // Why one lcore must receive all of a port's frames (a forward step that
  // writes state on the receiving lcore), or empty: `workers[].receive`
  // may not spread such a port over several lcores.
  std::string (*receive_on_owner)(const SwitchConfig& sw, const PortConfig& port) = nullptr;
};

// A key of each port map, e.g. nic.
struct PortSection {
  std::string_view key;  // empty: the folder has none
  void (*parse)(YamlReader& r, const Field& f, PortConfig* port) = nullptr;
  // Checks of port p of switch s, after the core's checks of that port.
  void (*validate)(ConfigCheck& k, size_t s, size_t p) = nullptr;
};

// What one folder adds to the configuration, at each level.
struct ConfigSections {
  TopSection top{};
  SwitchSection in_switch{};
  PortSection in_port{};
};

// Every folder's sections in reading order: the mechanisms'
// (lib/mechanisms/sections.h), then the emulator's (lib/emulator/sections.h).
std::span<const ConfigSections* const> all_config_sections();

}  // namespace sluice
