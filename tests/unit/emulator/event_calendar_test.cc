#include "lib/emulator/event_calendar.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <random>
#include <utility>
#include <vector>

namespace sluice {
namespace {

// Elements due at one instant come out by id, whatever order they were
// scheduled in: the total order that makes a run repeat.
TEST(EventCalendar, SameInstantByElementId) {
  EventCalendar cal(8);
  for (uint32_t id : {5u, 2u, 7u, 0u}) cal.set(id, 100);
  cal.set(3, 50);
  EXPECT_EQ(cal.next_time(), 50u);
  EXPECT_EQ(cal.pop(), 3u);
  std::vector<uint32_t> order;
  while (!cal.empty()) order.push_back(cal.pop());
  EXPECT_EQ(order, (std::vector<uint32_t>{0, 2, 5, 7}));
  EXPECT_EQ(cal.next_time(), EventCalendar::kNever);
}

// One entry per element: a new time replaces the old one, earlier or later.
TEST(EventCalendar, SetMovesTheOneEntry) {
  EventCalendar cal(4);
  cal.set(1, 300);
  cal.set(2, 200);
  cal.set(1, 100);  // earlier
  EXPECT_EQ(cal.size(), 2u);
  EXPECT_EQ(cal.next_element(), 1u);
  cal.set(1, 400);  // later
  EXPECT_EQ(cal.next_element(), 2u);
  EXPECT_EQ(cal.due(1), 400u);
  cal.set(2, EventCalendar::kNever);  // removed
  EXPECT_EQ(cal.due(2), EventCalendar::kNever);
  EXPECT_EQ(cal.size(), 1u);
  EXPECT_EQ(cal.pop(), 1u);
  EXPECT_TRUE(cal.empty());
}

// Beyond the horizon an element is kept but never comes out; removing or
// moving it back within the horizon works as for any other.
TEST(EventCalendar, BeyondTheHorizonNeverComesOut) {
  EventCalendar cal(3);
  cal.set(2, EventCalendar::kHorizon + 5);
  EXPECT_EQ(cal.size(), 1u);
  EXPECT_EQ(cal.next_time(), EventCalendar::kNever);
  cal.set(1, 1000);
  EXPECT_EQ(cal.next_time(), 1000u);
  EXPECT_EQ(cal.pop(), 1u);
  EXPECT_EQ(cal.next_time(), EventCalendar::kNever);
  cal.set(2, 2000);
  EXPECT_EQ(cal.next_time(), 2000u);
  EXPECT_EQ(cal.pop(), 2u);
  EXPECT_TRUE(cal.empty());
}

// A calendar moved into place (the loop builds it once it knows its
// elements) keeps working.
TEST(EventCalendar, MovedKeepsItsEntries) {
  EventCalendar a(0);
  EventCalendar b(5);
  b.set(4, 30);
  b.set(0, 10);
  a = std::move(b);
  a.set(3, 20);
  EXPECT_EQ(a.pop(), 0u);
  EXPECT_EQ(a.pop(), 3u);
  EXPECT_EQ(a.pop(), 4u);
  EXPECT_TRUE(a.empty());
}

TEST(EventCalendar, AtLeastOnlyMovesEarlier) {
  EventCalendar cal(2);
  cal.at_least(0, 500);
  cal.at_least(0, 700);
  EXPECT_EQ(cal.due(0), 500u);
  cal.at_least(0, 300);
  EXPECT_EQ(cal.due(0), 300u);
  cal.remove(0);
  cal.remove(0);  // twice is harmless
  EXPECT_TRUE(cal.empty());
}

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
