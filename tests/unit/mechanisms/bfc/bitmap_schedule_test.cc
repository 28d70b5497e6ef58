#include "lib/mechanisms/bfc/bitmap_schedule.h"

#include <gtest/gtest.h>

#include <array>
#include <stdexcept>
#include <vector>

namespace sluice {
namespace {

constexpr std::array<bool, 3> kFacing = {true, false, true};

std::vector<uint16_t> poll(BitmapSchedule& s, uint64_t now) {
  std::vector<uint16_t> ports;
  s.poll(now, [&](uint16_t p) { ports.push_back(p); });
  return ports;
}

TEST(BfcBitmapSchedule, EverySwitchFacingPortEveryInterval) {
  const uint64_t interval = 10 * 8'000;  // 10 x hop RTT
  BitmapSchedule s(kFacing, interval, 1000);
  EXPECT_EQ(s.next_due_ns(), 1000 + interval);
  EXPECT_TRUE(poll(s, 1000 + interval - 1).empty());
  EXPECT_EQ(poll(s, 1000 + interval), (std::vector<uint16_t>{0, 2}));
  EXPECT_TRUE(poll(s, 1000 + interval + 5).empty());
  // A late poll: due again one interval after it was sent.
  EXPECT_EQ(poll(s, 1000 + 2 * interval + 300), (std::vector<uint16_t>{0, 2}));
  EXPECT_EQ(s.next_due_ns(), 1000 + 3 * interval + 300);
  EXPECT_THROW(BitmapSchedule(kFacing, 0, 0), std::invalid_argument);
}

TEST(BfcBitmapSchedule, OnlyHostFacingPortsMeansNeverDue) {
  const std::array<bool, 2> hosts = {false, false};
  BitmapSchedule s(hosts, 100, 0);
  EXPECT_EQ(s.next_due_ns(), UINT64_MAX);
  EXPECT_TRUE(poll(s, 1'000'000).empty());
}

// first + interval and now + interval can pass 2^64 (bitmap_interval is any
// configured duration): the next bitmap is then never due, not due at once.
TEST(BfcBitmapSchedule, DueTimesSaturateInsteadOfWrapping) {
  BitmapSchedule s(kFacing, UINT64_MAX - 5, 1000);  // 1000 + interval wraps to 994
  EXPECT_EQ(s.next_due_ns(), UINT64_MAX);
  EXPECT_TRUE(poll(s, 1000).empty());
  EXPECT_TRUE(poll(s, UINT64_MAX - 1).empty());

  BitmapSchedule t(kFacing, 1'000'000, 0);
  EXPECT_EQ(poll(t, UINT64_MAX - 10), (std::vector<uint16_t>{0, 2}));
  EXPECT_EQ(t.next_due_ns(), UINT64_MAX);        // would wrap to 999'989
  EXPECT_TRUE(poll(t, UINT64_MAX - 5).empty());  // not re-sent at once
}

}  // namespace
}  // namespace sluice
