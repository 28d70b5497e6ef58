#include "lib/config/key_suggest.h"

#include <algorithm>
#include <vector>

namespace sluice {

size_t edit_distance(std::string_view a, std::string_view b) {
  // Three rows of the dynamic-programming table: i-2, i-1 and i.
  std::vector<size_t> before(b.size() + 1), prev(b.size() + 1), row(b.size() + 1);
  for (size_t j = 0; j <= b.size(); ++j) prev[j] = j;
  for (size_t i = 1; i <= a.size(); ++i) {
    row[0] = i;
    for (size_t j = 1; j <= b.size(); ++j) {
      const size_t substitute = prev[j - 1] + (a[i - 1] == b[j - 1] ? 0 : 1);
      row[j] = std::min({prev[j] + 1, row[j - 1] + 1, substitute});
      if (i > 1 && j > 1 && a[i - 1] == b[j - 2] && a[i - 2] == b[j - 1]) {
        row[j] = std::min(row[j], before[j - 2] + 1);  // adjacent transposition
      }
    }
    std::swap(before, prev);
    std::swap(prev, row);
  }
  return prev[b.size()];
}

std::string closest_key(std::string_view key, std::span<const std::string_view> allowed,
                        size_t max_distance) {
  std::string_view best;
  size_t best_distance = max_distance + 1;
  for (std::string_view candidate : allowed) {
    const size_t d = edit_distance(key, candidate);
    if (d < best_distance) {
      best = candidate;
      best_distance = d;
    }
  }
  return std::string(best);
}

}  // namespace sluice
