#pragma once
// The three states TCD gives a queue (SPEC 4.4; docs/mechanisms/tcd.md):
// non-congestion, congestion, and undetermined (a queue that may have been
// built only because the downstream paused it).

#include <cstdint>

namespace sluice {

enum class TcdState : uint8_t { kNonCongestion = 0, kCongestion = 1, kUndetermined = 2 };

inline constexpr unsigned kTcdStates = 3;

constexpr unsigned index_of(TcdState s) { return static_cast<unsigned>(s); }

// Metric label values.
constexpr const char* tcd_state_name(TcdState s) {
  switch (s) {
    case TcdState::kNonCongestion:
      return "non_congestion";
    case TcdState::kCongestion:
      return "congestion";
    case TcdState::kUndetermined:
      return "undetermined";
  }
  return "?";
}

}  // namespace sluice
