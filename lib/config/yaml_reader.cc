#include "lib/config/yaml_reader.h"

#include <cctype>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <set>

#include "lib/config/key_suggest.h"
#include "lib/config/units.h"

namespace sluice {
namespace {

bool is_empty(const YAML::Node& n) { return !n.IsDefined() || n.IsNull(); }

std::string range_text(uint64_t min, uint64_t max, std::string (*format)(uint64_t)) {
  if (max == UINT64_MAX) return "at least " + format(min);
  return "between " + format(min) + " and " + format(max);
}

std::string bytes_text(uint64_t v) { return std::to_string(v) + "B"; }
// In the largest unit that keeps the value whole: 1000000 -> "1ms".
std::string ns_text(uint64_t v) {
  if (v != 0 && v % 1'000'000'000 == 0) return std::to_string(v / 1'000'000'000) + "s";
  if (v != 0 && v % 1'000'000 == 0) return std::to_string(v / 1'000'000) + "ms";
  if (v != 0 && v % 1'000 == 0) return std::to_string(v / 1'000) + "us";
  return std::to_string(v) + "ns";
}
std::string plain_text(uint64_t v) { return std::to_string(v); }

std::string lower(std::string s) {
  for (char& c : s) c = char(std::tolower(static_cast<unsigned char>(c)));
  return s;
}

}  // namespace

bool valid_host_port(const std::string& text) {
  const size_t colon = text.rfind(':');
  if (colon == std::string::npos || colon == 0 || colon + 1 == text.size()) return false;
  const std::string port = text.substr(colon + 1);
  if (port.size() > 5) return false;
  for (char c : port) {
    if (!std::isdigit(static_cast<unsigned char>(c))) return false;
  }
  const unsigned long n = std::stoul(port);
  return n >= 1 && n <= 65535;
}

int YamlReader::line_of(const YAML::Node& n) {
  if (!n.IsDefined()) return 0;
  const YAML::Mark mark = n.Mark();
  return mark.line < 0 ? 0 : mark.line + 1;
}

std::string YamlReader::describe(const YAML::Node& n) {
  if (is_empty(n)) return "nothing";
  if (n.IsMap()) return "a map";
  if (n.IsSequence()) return "a list";
  return "\"" + n.Scalar() + "\"";
}

void YamlReader::error(const YAML::Node& at, const std::string& path, std::string message) {
  // An empty value's mark points at the next token, often on a later line;
  // the line of its key is the one to report.
  int line = is_empty(at) ? 0 : line_of(at);
  if (line == 0) line = line_for(*lines_, path);
  errors_->push_back(ConfigError{file_, line, path, std::move(message)});
}

void YamlReader::record_line(const Field& f) {
  const int line = line_of(f.node);
  if (line > 0) (*lines_)[f.path] = line;
}

bool YamlReader::expect_map(const Field& f, std::span<const std::string_view> allowed) {
  if (is_empty(f.node)) return true;
  if (!f.node.IsMap()) {
    error(f.node, f.path, "expected a map, got " + describe(f.node));
    return false;
  }
  std::set<std::string> seen;
  for (const auto& kv : f.node) {
    const std::string key = kv.first.Scalar();
    const std::string path = f.path.empty() ? key : f.path + "." + key;
    if (!seen.insert(key).second) {
      error(kv.first, path, "key \"" + key + "\" is given twice");
      continue;
    }
    bool known = false;
    for (std::string_view a : allowed) known = known || a == key;
    if (known) continue;
    const std::string suggestion = closest_key(key, allowed);
    if (!suggestion.empty()) {
      error(kv.first, path, "unknown key \"" + key + "\"; did you mean \"" + suggestion + "\"?");
    } else {
      std::string list;
      for (std::string_view a : allowed) list += (list.empty() ? "" : ", ") + std::string(a);
      error(kv.first, path, "unknown key \"" + key + "\"; allowed keys: " + list);
    }
  }
  return true;
}

std::optional<std::vector<Field>> YamlReader::list(const Field& f) {
  std::vector<Field> out;
  if (is_empty(f.node)) return out;
  if (!f.node.IsSequence()) {
    error(f.node, f.path, "expected a list, got " + describe(f.node));
    return std::nullopt;
  }
  for (size_t i = 0; i < f.node.size(); ++i) {
    out.push_back(Field{f.node[i], f.path + "[" + std::to_string(i) + "]"});
    record_line(out.back());
  }
  return out;
}

std::optional<Field> YamlReader::field(const Field& map, std::string_view key, Need need) {
  const std::string path = map.path.empty() ? std::string(key) : map.path + "." + std::string(key);
  if (!is_empty(map.node) && map.node.IsMap()) {
    // Iterate rather than index: a const lookup of a missing key is harmless,
    // but the key node carries the line we want to record.
    for (const auto& kv : map.node) {
      if (kv.first.Scalar() != key) continue;
      (*lines_)[path] = line_of(kv.first);
      return Field{kv.second, path};
    }
  }
  if (need == Need::kRequired && (is_empty(map.node) || map.node.IsMap())) {
    error(map.node, path, "missing required key \"" + std::string(key) + "\"");
  }
  return std::nullopt;
}

std::optional<std::string> YamlReader::scalar_text(const Field& f, const std::string& what) {
  if (!f.node.IsDefined() || !f.node.IsScalar()) {
    error(f.node, f.path, "expected " + what + ", got " + describe(f.node));
    return std::nullopt;
  }
  return f.node.Scalar();
}

std::optional<std::string> YamlReader::string(const Field& f) { return scalar_text(f, "a string"); }

std::optional<uint64_t> YamlReader::integer(const Field& f, uint64_t min, uint64_t max) {
  const std::string what = "an integer " + range_text(min, max, plain_text);
  const auto text = scalar_text(f, what);
  if (!text) return std::nullopt;
  bool digits = !text->empty() && text->size() <= 19;
  for (char c : *text) digits = digits && std::isdigit(static_cast<unsigned char>(c));
  const uint64_t value = digits ? std::strtoull(text->c_str(), nullptr, 10) : 0;
  if (!digits || value < min || value > max) {
    error(f.node, f.path, "expected " + what + ", got " + describe(f.node));
    return std::nullopt;
  }
  return value;
}

std::optional<double> YamlReader::real(const Field& f, double min_exclusive, double max_inclusive) {
  // %g prints 0 and 1000 as such, not as 0.000000.
  const auto number = [](double v) {
    char buf[32];
    std::snprintf(buf, sizeof buf, "%g", v);
    return std::string(buf);
  };
  std::string what = "a number above " + number(min_exclusive);
  if (std::isfinite(max_inclusive)) what += " and at most " + number(max_inclusive);
  const auto text = scalar_text(f, what);
  if (!text) return std::nullopt;
  char* end = nullptr;
  const double value = text->empty() ? NAN : std::strtod(text->c_str(), &end);
  const bool whole = end != nullptr && *end == '\0' && std::isfinite(value);
  if (!whole || !(value > min_exclusive) || !(value <= max_inclusive)) {
    error(f.node, f.path, "expected " + what + ", got " + describe(f.node));
    return std::nullopt;
  }
  return value;
}

std::optional<double> YamlReader::probability(const Field& f) {
  const std::string what = "a probability between 0 and 1";
  const auto text = scalar_text(f, what);
  if (!text) return std::nullopt;
  char* end = nullptr;
  const double value = text->empty() ? NAN : std::strtod(text->c_str(), &end);
  const bool whole = end != nullptr && *end == '\0';
  if (!whole || !(value >= 0.0) || !(value <= 1.0)) {
    error(f.node, f.path, "expected " + what + ", got " + describe(f.node));
    return std::nullopt;
  }
  return value;
}

std::optional<bool> YamlReader::boolean(const Field& f) {
  const auto text = scalar_text(f, "true or false");
  if (!text) return std::nullopt;
  const std::string t = lower(*text);
  if (t == "true" || t == "yes" || t == "on") return true;
  if (t == "false" || t == "no" || t == "off") return false;
  error(f.node, f.path, "expected true or false, got " + describe(f.node));
  return std::nullopt;
}

std::optional<uint64_t> YamlReader::with_unit(const Field& f,
                                              std::optional<uint64_t> (*parse)(std::string_view),
                                              const std::string& what, uint64_t min, uint64_t max,
                                              std::string (*format)(uint64_t)) {
  const auto text = scalar_text(f, what);
  if (!text) return std::nullopt;
  const auto value = parse(*text);
  if (!value) {
    error(f.node, f.path, "expected " + what + ", got " + describe(f.node));
    return std::nullopt;
  }
  if (*value < min || *value > max) {
    error(f.node, f.path,
          "expected a value " + range_text(min, max, format) + ", got " + describe(f.node));
    return std::nullopt;
  }
  return value;
}

std::optional<uint64_t> YamlReader::rate(const Field& f) {
  return with_unit(f, parse_rate_bps, "a rate such as 10Gbps or 100Mbps", 0, UINT64_MAX,
                   plain_text);
}

std::optional<uint64_t> YamlReader::size(const Field& f, uint64_t min, uint64_t max) {
  return with_unit(f, parse_size_bytes, "a size such as 100KB, 12MiB or 1500B", min, max,
                   bytes_text);
}

std::optional<uint64_t> YamlReader::duration(const Field& f, uint64_t min, uint64_t max) {
  return with_unit(f, parse_duration_ns, "a duration such as 10us, 500ns or 1ms", min, max,
                   ns_text);
}

}  // namespace sluice
