#pragma once
// "Did you mean" suggestions for misspelt configuration keys.

#include <cstddef>
#include <initializer_list>
#include <span>
#include <string>
#include <string_view>

namespace sluice {

// Edit distance counting insertions, deletions, substitutions and swaps of
// two adjacent characters as 1 each ("rtae" is 1 away from "rate").
size_t edit_distance(std::string_view a, std::string_view b);

// The allowed key closest to `key` if its distance is at most `max_distance`
// (ties: the first in `allowed`); empty if none is that close.
std::string closest_key(std::string_view key, std::span<const std::string_view> allowed,
                        size_t max_distance = 2);
inline std::string closest_key(std::string_view key,
                               std::initializer_list<std::string_view> allowed,
                               size_t max_distance = 2) {
  return closest_key(key, std::span<const std::string_view>(allowed.begin(), allowed.size()),
                     max_distance);
}

}  // namespace sluice
