#include "lib/emulator/wheel_calendar.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <random>
#include <utility>
#include <vector>

namespace sluice {
namespace {

constexpr uint64_t kSpan = WheelCalendar::kSpan;

// Entries out of the wheel's reach (later than its span, or earlier than
// its base) keep their place in the one order, and move between the two
// parts as they are set.
TEST(WheelCalendar, NearAndFarEntriesInOneOrder) {
  WheelCalendar cal(6);
  cal.set(0, 10);
  EXPECT_EQ(cal.next_time(), 10u);  // the base moves to 10
  cal.set(1, 10 + kSpan);           // just out of reach
  cal.set(2, 10 + kSpan - 1);       // the wheel's last slot
  cal.set(3, 5 * kSpan);
  cal.set(4, 10);  // the same instant as 0, a larger id
  EXPECT_EQ(cal.pop(), 0u);
  EXPECT_EQ(cal.second_element(), 2u);
  EXPECT_EQ(cal.pop(), 4u);
  EXPECT_EQ(cal.due(1), 10 + kSpan);
  EXPECT_EQ(cal.pop(), 2u);
  EXPECT_EQ(cal.pop(), 1u);
  cal.set(3, 4 * kSpan);  // a far entry moved earlier, still far
  cal.set(5, 4 * kSpan);
  EXPECT_EQ(cal.next_time(), 4 * kSpan);
  EXPECT_EQ(cal.pop(), 3u);
  cal.set(1, 4 * kSpan + 7);  // near again
  EXPECT_EQ(cal.pop(), 5u);
  EXPECT_EQ(cal.pop(), 1u);
  EXPECT_TRUE(cal.empty());
}

// The loop's cheap guess at the entry after the earliest: exact among the
// wheel's entries; a heap entry coming second is not looked for.
TEST(WheelCalendar, LikelySecondFollowsTheWheel) {
  WheelCalendar cal(6);
  EXPECT_EQ(cal.likely_second(), WheelCalendar::kNone);
  cal.set(3, 100);
  EXPECT_EQ(cal.next_time(), 100u);
  EXPECT_EQ(cal.likely_second(), WheelCalendar::kNone);
  cal.set(1, 100);  // the same instant, a smaller id: first now
  cal.set(4, 300);
  EXPECT_EQ(cal.next_element(), 1u);
  EXPECT_EQ(cal.likely_second(), 3u);
  EXPECT_EQ(cal.likely_second(), cal.second_element());
  cal.pop();
  cal.pop();
  EXPECT_EQ(cal.likely_second(), WheelCalendar::kNone);  // 4 alone
  cal.set(2, 200);
  EXPECT_EQ(cal.likely_second(), 4u);  // the next slot's
  cal.set(5, 250 + 10 * kSpan);        // far: in the heap
  cal.set(4, 270 + 10 * kSpan);        // far too
  EXPECT_EQ(cal.second_element(), 5u);
  EXPECT_EQ(cal.likely_second(), WheelCalendar::kNone);  // not looked for
}

// One instant's entries come out in id order whatever order they were
// filed in (before, after or between those already there), and whichever
// of them left the instant again (its first, its last, some between).
TEST(WheelCalendar, OneInstantInIdOrder) {
  constexpr uint32_t kElements = 64;
  WheelCalendar cal(kElements);
  std::vector<uint32_t> order(kElements);
  for (uint32_t i = 0; i < kElements; ++i) order[i] = i;
  std::mt19937_64 rng(7);
  for (int round = 0; round < 50; ++round) {
    const uint64_t t = 1000 + static_cast<uint64_t>(round);
    std::shuffle(order.begin(), order.end(), rng);
    for (uint32_t id : order) cal.set(id, t);
    // Some leave the instant again: the first, the last, and some between.
    std::vector<bool> left(kElements, false);
    for (uint32_t id : {0u, kElements - 1, 5u, 33u, 34u, 60u}) {
      cal.set(id, t + 10);
      left[id] = true;
    }
    for (uint32_t id = 0; id < kElements; ++id) {
      if (left[id]) continue;
      ASSERT_EQ(cal.next_time(), t);
      ASSERT_EQ(cal.pop(), id);
    }
    for (uint32_t id = 0; id < kElements; ++id) {
      if (left[id]) {
        ASSERT_EQ(cal.pop(), id);
      }
    }
    ASSERT_TRUE(cal.empty());
  }
}

// Against a sorted reference, used as the fabric loop uses it (the
// earliest entry is looked at, then moved later or taken off) and with
// times anywhere: mostly within the wheel's reach, some beyond it, some
// before its base, many at one instant; the wheel goes round many times.
TEST(WheelCalendar, MatchesReferenceOnRandomOperations) {
  constexpr uint32_t kElements = 300;
  WheelCalendar cal(kElements);
  std::vector<uint64_t> ref(kElements, WheelCalendar::kNever);
  std::mt19937_64 rng(12);
  uint64_t now = 1'000'000;
  auto pick_time = [&] {
    const unsigned r = static_cast<unsigned>(rng() % 20);
    if (r < 12) return now + rng() % 2000;                           // near
    if (r < 15) return now + rng() % 4;                              // crowded instants
    if (r < 18) return now + rng() % (4 * kSpan);                    // near or far
    if (r < 19) return now - std::min<uint64_t>(now, rng() % 3000);  // before the base
    return now + kSpan - 2 + rng() % 4;                              // the wheel's edge
  };
  for (int step = 0; step < 400000; ++step) {
    const uint32_t id = static_cast<uint32_t>(rng() % kElements);
    const unsigned op = static_cast<unsigned>(rng() % 10);
    if (op < 4) {
      const uint64_t t = pick_time();
      cal.set(id, t);
      ref[id] = t;
    } else if (op < 5) {
      cal.remove(id);
      ref[id] = WheelCalendar::kNever;
    } else if (op < 6) {
      const uint64_t t = pick_time();
      cal.at_least(id, t);
      ref[id] = std::min(ref[id], t);
    } else if (!cal.empty()) {
      std::pair<uint64_t, uint32_t> best{WheelCalendar::kNever, 0}, second = best;
      for (uint32_t e = 0; e < kElements; ++e) {
        if (ref[e] == WheelCalendar::kNever) continue;
        const std::pair<uint64_t, uint32_t> x{ref[e], e};
        if (x < best) {
          second = best;
          best = x;
        } else if (x < second) {
          second = x;
        }
      }
      ASSERT_EQ(cal.next_time(), best.first);
      ASSERT_EQ(cal.next_element(), best.second);
      ASSERT_EQ(cal.second_element(),
                second.first == WheelCalendar::kNever ? WheelCalendar::kNone : second.second);
      now = std::max(now, best.first);
      if (op < 8) {
        ASSERT_EQ(cal.pop(), best.second);
        ref[best.second] = WheelCalendar::kNever;
      } else {  // handled and due again later, as the loop leaves it in place
        const uint64_t t = best.first + 1 + rng() % 3000;
        cal.set(best.second, t);
        ref[best.second] = t;
      }
    }
    ASSERT_EQ(cal.due(id), ref[id]);
    ASSERT_EQ(cal.size(), static_cast<size_t>(std::count_if(ref.begin(), ref.end(), [](uint64_t t) {
                return t != WheelCalendar::kNever;
              })));
  }
}

}  // namespace
}  // namespace sluice
