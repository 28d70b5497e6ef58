#include "lib/emulator/event_calendar.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <random>
#include <utility>
#include <vector>

namespace sluice {
namespace {

// Against a sorted reference: random sets, removes and pops over many
// elements come out in (time, id) order with each element's latest time.
TEST(EventCalendar, MatchesReferenceOnRandomOperations) {
  constexpr uint32_t kElements = 300;
  EventCalendar cal(kElements);
  std::vector<uint64_t> ref(kElements, EventCalendar::kNever);
  std::mt19937_64 rng(11);
  uint64_t now = 0;
  for (int step = 0; step < 200000; ++step) {
    const uint32_t id = static_cast<uint32_t>(rng() % kElements);
    const unsigned op = static_cast<unsigned>(rng() % 10);
    if (op < 5) {
      const uint64_t t = now + rng() % 1000;
      cal.set(id, t);
      ref[id] = t;
    } else if (op < 6) {
      cal.remove(id);
      ref[id] = EventCalendar::kNever;
    } else if (op < 7) {
      const uint64_t t = now + rng() % 1000;
      cal.at_least(id, t);
      ref[id] = std::min(ref[id], t);
    } else if (!cal.empty()) {
      std::pair<uint64_t, uint32_t> best{EventCalendar::kNever, 0}, second = best;
      for (uint32_t e = 0; e < kElements; ++e) {
        if (ref[e] == EventCalendar::kNever) continue;
        const std::pair<uint64_t, uint32_t> x{ref[e], e};
        if (x < best) {
          second = best;
          best = x;
        } else if (x < second) {
          second = x;
        }
      }
      ASSERT_EQ(cal.next_time(), best.first);
      // The entry after the earliest: what the loop prefetches for.
      ASSERT_EQ(cal.second_element(),
                second.first == EventCalendar::kNever ? EventCalendar::kNone : second.second);
      ASSERT_EQ(cal.pop(), best.second);
      ref[best.second] = EventCalendar::kNever;
      now = best.first;
    }
    ASSERT_EQ(cal.due(id), ref[id]);
  }
}

}  // namespace
}  // namespace sluice
