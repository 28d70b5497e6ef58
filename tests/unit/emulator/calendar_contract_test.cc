// What the fabric loop asks of a calendar, held for both kinds: the
// emulated hosts' heap (EventCalendar) and the loop's wheel
// (WheelCalendar). Each kind's own behaviour (the wheel's reach, the
// random operations against a reference) is in its own test file.

#include <gtest/gtest.h>

#include <utility>
#include <vector>

#include "lib/emulator/event_calendar.h"
#include "lib/emulator/wheel_calendar.h"

namespace sluice {
namespace {

template <class Calendar>
class CalendarContract : public ::testing::Test {};

using Calendars = ::testing::Types<EventCalendar, WheelCalendar>;
TYPED_TEST_SUITE(CalendarContract, Calendars);

// Elements due at one instant come out by id, whatever order they were
// scheduled in: the total order that makes a run repeat.
TYPED_TEST(CalendarContract, SameInstantByElementId) {
  TypeParam cal(8);
  for (uint32_t id : {5u, 2u, 7u, 0u}) cal.set(id, 100);
  cal.set(3, 50);
  EXPECT_EQ(cal.next_time(), 50u);
  EXPECT_EQ(cal.second_element(), 0u);
  EXPECT_EQ(cal.pop(), 3u);
  std::vector<uint32_t> order;
  while (!cal.empty()) order.push_back(cal.pop());
  EXPECT_EQ(order, (std::vector<uint32_t>{0, 2, 5, 7}));
  EXPECT_EQ(cal.next_time(), TypeParam::kNever);
}

// One entry per element: a new time replaces the old one, earlier or later.
TYPED_TEST(CalendarContract, SetMovesTheOneEntry) {
  TypeParam cal(4);
  cal.set(1, 300);
  cal.set(2, 200);
  cal.set(1, 100);  // earlier
  EXPECT_EQ(cal.size(), 2u);
  EXPECT_EQ(cal.next_element(), 1u);
  cal.set(1, 400);  // later
  EXPECT_EQ(cal.next_element(), 2u);
  EXPECT_EQ(cal.due(1), 400u);
  cal.set(2, TypeParam::kNever);  // removed
  EXPECT_EQ(cal.due(2), TypeParam::kNever);
  EXPECT_EQ(cal.size(), 1u);
  EXPECT_EQ(cal.pop(), 1u);
  EXPECT_TRUE(cal.empty());
}

// Beyond the horizon an element is kept but never comes out; removing or
// moving it back within the horizon works as for any other.
TYPED_TEST(CalendarContract, BeyondTheHorizonNeverComesOut) {
  TypeParam cal(3);
  cal.set(2, EventCalendar::kHorizon + 5);
  EXPECT_EQ(cal.size(), 1u);
  EXPECT_EQ(cal.next_time(), TypeParam::kNever);
  cal.set(1, 1000);
  EXPECT_EQ(cal.next_time(), 1000u);
  EXPECT_EQ(cal.pop(), 1u);
  EXPECT_EQ(cal.next_time(), TypeParam::kNever);
  cal.set(2, 2000);
  EXPECT_EQ(cal.next_time(), 2000u);
  EXPECT_EQ(cal.pop(), 2u);
  EXPECT_TRUE(cal.empty());
}

// A calendar moved into place (the loop builds it once it knows its
// elements) keeps working.
TYPED_TEST(CalendarContract, MovedKeepsItsEntries) {
  TypeParam a(0);
  TypeParam b(5);
  b.set(4, 30);
  b.set(0, 10);
  a = std::move(b);
  a.set(3, 20);
  EXPECT_EQ(a.pop(), 0u);
  EXPECT_EQ(a.pop(), 3u);
  EXPECT_EQ(a.pop(), 4u);
  EXPECT_TRUE(a.empty());
}

TYPED_TEST(CalendarContract, AtLeastOnlyMovesEarlier) {
  TypeParam cal(2);
  cal.at_least(0, 500);
  cal.at_least(0, 700);
  EXPECT_EQ(cal.due(0), 500u);
  cal.at_least(0, 300);
  EXPECT_EQ(cal.due(0), 300u);
  cal.remove(0);
  cal.remove(0);  // twice is harmless
  EXPECT_TRUE(cal.empty());
}

}  // namespace
}  // namespace sluice
