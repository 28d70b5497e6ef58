#include "lib/config/units.h"

#include <array>
#include <cctype>
#include <string>

namespace sluice {
namespace {

using u128 = unsigned __int128;

struct Decimal {
  u128 mantissa = 0;   // digits with the point removed
  unsigned scale = 0;  // number of digits after the point
};

std::string_view trim(std::string_view s) {
  while (!s.empty() && std::isspace(static_cast<unsigned char>(s.front()))) s.remove_prefix(1);
  while (!s.empty() && std::isspace(static_cast<unsigned char>(s.back()))) s.remove_suffix(1);
  return s;
}

// Splits "2.5 Gbps" into the number and the unit text ("Gbps").
std::optional<Decimal> parse_number(std::string_view& s) {
  Decimal d;
  size_t i = 0;
  size_t int_digits = 0, frac_digits = 0;
  for (; i < s.size() && std::isdigit(static_cast<unsigned char>(s[i])); ++i, ++int_digits) {
    if (d.mantissa > (u128(1) << 100)) return std::nullopt;
    d.mantissa = d.mantissa * 10 + unsigned(s[i] - '0');
  }
  if (i < s.size() && s[i] == '.') {
    ++i;
    for (; i < s.size() && std::isdigit(static_cast<unsigned char>(s[i])); ++i, ++frac_digits) {
      if (frac_digits >= 18 || d.mantissa > (u128(1) << 100)) return std::nullopt;
      d.mantissa = d.mantissa * 10 + unsigned(s[i] - '0');
    }
    if (frac_digits == 0) return std::nullopt;  // "10." is a typo
  }
  if (int_digits == 0) return std::nullopt;
  d.scale = unsigned(frac_digits);
  s = trim(s.substr(i));
  return d;
}

// mantissa * multiplier / 10^scale, if that is a whole number that fits.
std::optional<uint64_t> scale_exact(const Decimal& d, uint64_t multiplier) {
  u128 pow10 = 1;
  for (unsigned i = 0; i < d.scale; ++i) pow10 *= 10;
  const u128 product = d.mantissa * multiplier;  // mantissa < 2^104, multiplier < 2^42
  if (product % pow10 != 0) return std::nullopt;
  const u128 value = product / pow10;
  if (value > UINT64_MAX) return std::nullopt;
  return uint64_t(value);
}

struct Unit {
  std::string_view name;
  uint64_t multiplier;
};

std::optional<uint64_t> parse_with_units(std::string_view text, const Unit* units, size_t n,
                                         bool bare_allowed) {
  std::string_view s = trim(text);
  const auto number = parse_number(s);
  if (!number) return std::nullopt;
  if (s.empty()) {
    if (bare_allowed || number->mantissa == 0) return scale_exact(*number, 1);
    return std::nullopt;
  }
  for (size_t i = 0; i < n; ++i) {
    if (s == units[i].name) return scale_exact(*number, units[i].multiplier);
  }
  return std::nullopt;
}

constexpr uint64_t kK = 1000, kM = kK * 1000, kG = kM * 1000, kT = kG * 1000;

}  // namespace

std::optional<uint64_t> parse_rate_bps(std::string_view text) {
  // A prefix letter (either case, or none) followed by bps, bit/s, b/s or nothing.
  static constexpr std::array<std::pair<char, uint64_t>, 5> kPrefixes = {
      {{'\0', 1}, {'k', kK}, {'m', kM}, {'g', kG}, {'t', kT}}};
  static constexpr std::array<std::string_view, 4> kSuffixes = {"bps", "bit/s", "b/s", ""};
  std::string_view s = trim(text);
  const auto number = parse_number(s);
  if (!number) return std::nullopt;
  if (s.empty()) return number->mantissa == 0 ? scale_exact(*number, 1) : std::nullopt;
  for (const auto& [letter, multiplier] : kPrefixes) {
    std::string_view rest = s;
    if (letter != '\0') {
      if (std::tolower(static_cast<unsigned char>(rest.front())) != letter) continue;
      rest.remove_prefix(1);
    }
    for (std::string_view suffix : kSuffixes) {
      if (rest == suffix && !(letter == '\0' && suffix.empty())) {
        return scale_exact(*number, multiplier);
      }
    }
  }
  return std::nullopt;
}

std::optional<uint64_t> parse_size_bytes(std::string_view text) {
  static constexpr Unit kUnits[] = {{"B", 1},
                                    {"KB", kK},
                                    {"kB", kK},
                                    {"MB", kM},
                                    {"GB", kG},
                                    {"TB", kT},
                                    {"KiB", 1ull << 10},
                                    {"MiB", 1ull << 20},
                                    {"GiB", 1ull << 30},
                                    {"TiB", 1ull << 40}};
  return parse_with_units(text, kUnits, std::size(kUnits), /*bare_allowed=*/true);
}

std::optional<uint64_t> parse_duration_ns(std::string_view text) {
  static constexpr Unit kUnits[] = {
      {"ns", 1}, {"us", kK}, {"\xC2\xB5s", kK}, {"ms", kM}, {"s", kG}};
  return parse_with_units(text, kUnits, std::size(kUnits), /*bare_allowed=*/false);
}

}  // namespace sluice
