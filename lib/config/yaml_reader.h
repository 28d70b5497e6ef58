#pragma once
// Typed reads from a yaml-cpp tree that never throw: every problem becomes a
// ConfigError (file, 1-based line, dotted key, what was expected) appended to
// a list, and the read returns nullopt so the loader can carry on and report
// the rest of the file too. The loader reads the core sections with it, and
// each mechanism's and the emulator's sections read theirs
// (lib/config/config_section.h).

#include <yaml-cpp/yaml.h>

#include <cstdint>
#include <initializer_list>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "lib/config/config_loader.h"
#include "lib/config/config_validate.h"

namespace sluice {

enum class Need { kOptional, kRequired };

// Stores a read value if there is one: set(r.integer(f, 1, 64), &out->queues).
template <typename T, typename U>
void set(const std::optional<T>& value, U* out) {
  if (value) *out = static_cast<U>(*value);
}

// "host:port" with a port in 1..65535 (the host is not checked).
bool valid_host_port(const std::string& text);

// A node together with its dotted key path, e.g. switches[0].ports[1].rate.
struct Field {
  YAML::Node node;
  std::string path;
};

class YamlReader {
 public:
  YamlReader(std::string file, std::vector<ConfigError>* errors, KeyLines* lines)
      : file_(std::move(file)), errors_(errors), lines_(lines) {}

  void error(const YAML::Node& at, const std::string& path, std::string message);

  // True if `f` is a map (or empty, which counts as an empty map). Reports
  // keys not in `allowed` (with a suggestion) and keys given twice.
  bool expect_map(const Field& f, std::span<const std::string_view> allowed);
  bool expect_map(const Field& f, std::initializer_list<std::string_view> allowed) {
    return expect_map(f, std::span<const std::string_view>(allowed.begin(), allowed.size()));
  }
  // The elements of a list (an empty node is an empty list), paths "p[i]".
  std::optional<std::vector<Field>> list(const Field& f);

  // The child `key` of a map, recorded in the line table; reports a missing
  // required key at the line of the map.
  std::optional<Field> field(const Field& map, std::string_view key, Need need);

  std::optional<std::string> string(const Field& f);
  std::optional<uint64_t> integer(const Field& f, uint64_t min, uint64_t max);
  std::optional<double> real(const Field& f, double min_exclusive, double max_inclusive);
  // A number in [0, 1], both ends included.
  std::optional<double> probability(const Field& f);
  std::optional<bool> boolean(const Field& f);
  std::optional<uint64_t> rate(const Field& f);
  std::optional<uint64_t> size(const Field& f, uint64_t min, uint64_t max);
  std::optional<uint64_t> duration(const Field& f, uint64_t min, uint64_t max);

  // One of a fixed set of words, e.g. drr | strict.
  template <typename T>
  std::optional<T> choice(const Field& f,
                          std::initializer_list<std::pair<std::string_view, T>> words) {
    const auto text = scalar_text(f, "one of " + join_words(words));
    if (!text) return std::nullopt;
    for (const auto& [word, value] : words) {
      if (*text == word) return value;
    }
    error(f.node, f.path, "expected one of " + join_words(words) + ", got " + describe(f.node));
    return std::nullopt;
  }

  void record_line(const Field& f);
  static int line_of(const YAML::Node& n);
  static std::string describe(const YAML::Node& n);  // "a map", "nothing", "\"text\""

 private:
  // The scalar text, or an error "expected <what>, got a map".
  std::optional<std::string> scalar_text(const Field& f, const std::string& what);
  std::optional<uint64_t> with_unit(const Field& f,
                                    std::optional<uint64_t> (*parse)(std::string_view),
                                    const std::string& what, uint64_t min, uint64_t max,
                                    std::string (*format)(uint64_t));

  template <typename T>
  static std::string join_words(std::initializer_list<std::pair<std::string_view, T>> words) {
    std::string out;
    for (const auto& w : words) {
      if (!out.empty()) out += ", ";
      out += w.first;
    }
    return out;
  }

  std::string file_;
  std::vector<ConfigError>* errors_;
  KeyLines* lines_;
};

}  // namespace sluice
