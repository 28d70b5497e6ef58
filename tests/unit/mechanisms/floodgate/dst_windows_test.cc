// Floodgate's per-destination windows: initial value, debit, credit that
// never lifts a window above where it started, a full table.
#include "lib/mechanisms/floodgate/dst_windows.h"

#include <gtest/gtest.h>

namespace sluice {
namespace {

TEST(FgInitialWindow, AlphaTimesNextHopBdpPlusOneCreditInterval) {
  // 100 Gbit/s, hop RTT 10 us: BDP 125000 B; alpha 1.5 -> 187500; T = 10 us
  // adds 125000.
  EXPECT_EQ(initial_window_bytes(100'000'000'000, 10'000, 1.5, 10'000), 312'500u);
  EXPECT_EQ(initial_window_bytes(10'000'000'000, 4'000, 1.0, 0), 5'000u);
  EXPECT_EQ(initial_window_bytes(UINT64_MAX, UINT64_MAX, 2.0, 0), UINT32_MAX);
}

TEST(FgWindows, DebitThenCreditBackToInitial) {
  DstWindows w(4);
  DstWindow* a = w.find_or_add(0x0A000001, 3000);
  ASSERT_NE(a, nullptr);
  EXPECT_TRUE(w.may_send(*a, 3000));
  EXPECT_FALSE(w.may_send(*a, 3001));
  w.debit(*a, 1500);
  w.debit(*a, 1500);
  EXPECT_EQ(a->window, 0);
  EXPECT_FALSE(w.may_send(*a, 1));
  EXPECT_EQ(w.in_use(), 1u);
  EXPECT_EQ(w.outstanding_bytes(), 3000u);
  EXPECT_EQ(w.credit(0x0A000001, 1500), 0u);
  EXPECT_TRUE(w.may_send(*a, 1500));
  EXPECT_EQ(w.credit(0x0A000001, 1500), 0u);
  EXPECT_EQ(a->window, 3000);
  EXPECT_EQ(w.in_use(), 0u);
  EXPECT_EQ(w.outstanding_bytes(), 0u);
}

TEST(FgWindows, CreditNeverLiftsAWindowAboveItsInitialValue) {
  DstWindows w(4);
  DstWindow* a = w.find_or_add(7, 3000);
  w.debit(*a, 1000);
  EXPECT_EQ(w.credit(7, 1500), 500u);  // 500 B were never sent
  EXPECT_EQ(a->window, 3000);
  EXPECT_EQ(w.credit(7, 100), 100u);
  EXPECT_EQ(w.credit(8, 100), 100u);  // no window: nothing was ever sent
  EXPECT_EQ(w.invalid_credit_bytes.get(), 700u);
  EXPECT_EQ(w.find(8), nullptr);  // credit creates no window
}

TEST(FgWindows, AWindowPerDestinationAndAFullTableRefusesNewOnes) {
  DstWindows w(3);
  for (uint32_t d = 1; d <= 3; ++d) ASSERT_NE(w.find_or_add(d, 1000 * d), nullptr);
  EXPECT_EQ(w.find_or_add(4, 1000), nullptr);
  EXPECT_EQ(w.table_full.get(), 1u);
  for (uint32_t d = 1; d <= 3; ++d) {
    DstWindow* x = w.find_or_add(d, 1);  // found, initial unchanged
    ASSERT_NE(x, nullptr);
    EXPECT_EQ(x->initial, 1000 * d);
  }
}

TEST(FgWindows, HoldsItsCapacityOfDestinationsThatCollide) {
  DstWindows w(64);
  // Destinations differing only above the hash's low bits still all fit.
  for (uint32_t d = 0; d < 64; ++d) ASSERT_NE(w.find_or_add(d << 26, 100), nullptr) << d;
  for (uint32_t d = 0; d < 64; ++d) EXPECT_EQ(w.find(d << 26)->dst, d << 26);
  EXPECT_EQ(w.find(0x12345678), nullptr);
}

}  // namespace
}  // namespace sluice
