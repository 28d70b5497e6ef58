// DCQCN's reaction point as HPCC's and Floodgate's public ns-3 run it
// (lib/emulator/transport/dcqcn/dcqcn_mlx_control.h), on a simulated clock,
// with the Floodgate incast-mix's settings (mix/config-dcqcn.ini): line rate
// 100 Gb/s, g = 1/256, alpha every 1 us, a rate check every 4 us, increase
// timer 900 us, F = 1, R_AI 50 Mb/s, R_HAI 100 Mb/s, no target clamp.
// Expected values are their rules worked by hand:
//   first CNP at t0: alpha = 1, alpha updates at t0 + k us, rate checks at
//     t0 + 4 us + 1 ns + k 4 us; no cut at the CNP itself;
//   alpha update: (1 - g) alpha + g if a CNP came since the last, else (1 - g) alpha;
//   cut: RT = RC unless no increase since the last cut; RC = RC (1 - alpha / 2);
//   increase (stage, then stage += 1): < F fast recovery, == F + R_AI, > F + R_HAI.

#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <vector>

#include "lib/emulator/transport/dcqcn/dcqcn_mlx_control.h"
#include "lib/emulator/transport/dcqcn/dcqcn_params.h"
#include "lib/emulator/transport/flow_transport.h"
#include "lib/emulator/transport/segment.h"

namespace sluice {
namespace {

constexpr double kLine = 100e9;
constexpr double kKeep = 1.0 - 1.0 / 256;

Segment cnp() {
  Segment s;
  s.kind = SegmentKind::kCnp;
  return s;
}

DcqcnParams floodgate_ns3() {
  DcqcnParams p;
  p.rules = DcqcnParams::Rules::kNs3Mlx;
  p.alpha_interval_ns = 1'000;
  p.decrease_interval_ns = 4'000;
  p.rate_timer_ns = 900'000;
  p.fast_recovery_stages = 1;
  p.rate_ai_bps = 50'000'000;
  p.rate_hai_bps = 100'000'000;
  p.clamp_target_rate = false;
  return p;
}

DcqcnMlxControl make(DcqcnParams p = floodgate_ns3()) {
  return DcqcnMlxControl(p, TransportContext{});
}

TEST(DcqcnMlx, FirstCnpStartsTheClocksAndTheFirstCheckCuts) {
  auto d = make();
  EXPECT_EQ(d.timer_due_ns(), kTransportNever);
  d.on_cnp(10'000, cnp());
  EXPECT_EQ(d.rate_bps(), 100'000'000'000u);  // no cut at the CNP itself
  EXPECT_EQ(d.timer_due_ns(), 14'001u);
  d.on_timer(14'000);  // not yet due
  EXPECT_EQ(d.cuts(), 0u);
  d.on_timer(14'001);
  // Updates at 11, 12, 13 and 14 us saw no CNP (the first one's flag is cleared).
  const double alpha = std::pow(kKeep, 4);
  EXPECT_DOUBLE_EQ(d.alpha_at(14'001), alpha);
  EXPECT_EQ(d.cuts(), 1u);
  EXPECT_DOUBLE_EQ(d.current_rate(), kLine * (1 - alpha / 2));
  EXPECT_DOUBLE_EQ(d.target_rate(), kLine);  // no clamp before any increase
  EXPECT_EQ(d.timer_due_ns(), 914'001u);     // the increase timer, 900 us on
}

TEST(DcqcnMlx, LaterCnpsCutAtTheNextCheckAndRaiseAlphaAtTheNextUpdate) {
  auto d = make();
  d.on_cnp(10'000, cnp());
  d.on_timer(14'001);
  const double rc1 = d.current_rate();
  d.on_cnp(20'000, cnp());
  // Checks fall on 14,001 + k 4,000: the first at or after 20,000 is 22,001.
  EXPECT_EQ(d.timer_due_ns(), 22'001u);
  d.on_timer(22'001);
  // 15..20 us: six decays; 21 us: the CNP's update; 22 us: a decay.
  const double alpha = (std::pow(kKeep, 10) * kKeep + 1.0 / 256) * kKeep;
  EXPECT_DOUBLE_EQ(d.alpha_at(22'001), alpha);
  EXPECT_EQ(d.cuts(), 2u);
  EXPECT_DOUBLE_EQ(d.current_rate(), rc1 * (1 - alpha / 2));
  EXPECT_DOUBLE_EQ(d.target_rate(), kLine);  // still no increase between the cuts
  EXPECT_EQ(d.timer_due_ns(), 922'001u);
}

TEST(DcqcnMlx, IncreasesByTheTimerAloneThroughFastAdditiveAndHyper) {
  auto d = make();
  d.on_cnp(10'000, cnp());
  d.on_timer(14'001);
  double rc = d.current_rate();
  double rt = kLine;
  d.on_timer(914'001);  // stage 0 < F: fast recovery
  rc = rc / 2 + rt / 2;
  EXPECT_DOUBLE_EQ(d.current_rate(), rc);
  EXPECT_EQ(d.stage(), 1u);
  d.on_cnp(1'000'000, cnp());
  EXPECT_EQ(d.timer_due_ns(), 1'002'001u);  // 14,001 + 247 x 4,000
  d.on_timer(1'002'001);
  rt = rc;  // an increase came since the last cut: the target is clamped
  const double alpha = d.alpha_at(1'002'001);
  rc = rc * (1 - alpha / 2);
  EXPECT_DOUBLE_EQ(d.target_rate(), rt);
  EXPECT_DOUBLE_EQ(d.current_rate(), rc);
  d.on_timer(1'902'001);  // stage 0: fast recovery
  rc = rc / 2 + rt / 2;
  d.on_timer(2'802'001);  // stage 1 == F: additive
  rt += 50e6;
  rc = rc / 2 + rt / 2;
  EXPECT_DOUBLE_EQ(d.target_rate(), rt);
  EXPECT_DOUBLE_EQ(d.current_rate(), rc);
  d.on_timer(3'702'001);  // stage 2 > F: hyper, one R_HAI (not i R_HAI)
  rt += 100e6;
  rc = rc / 2 + rt / 2;
  d.on_timer(4'602'001);  // hyper again
  rt += 100e6;
  rc = rc / 2 + rt / 2;
  EXPECT_DOUBLE_EQ(d.target_rate(), rt);
  EXPECT_DOUBLE_EQ(d.current_rate(), rc);
  EXPECT_EQ(d.fast_recoveries(), 2u);
  EXPECT_EQ(d.additive_increases(), 1u);
  EXPECT_EQ(d.hyper_increases(), 2u);
}

TEST(DcqcnMlx, AnIncreaseDueWithACheckGoesFirst) {
  auto d = make();
  d.on_cnp(10'000, cnp());
  d.on_timer(14'001);
  const double rc0 = d.current_rate();
  d.on_cnp(913'500, cnp());  // its check is 914,001, when the increase is due too
  EXPECT_EQ(d.timer_due_ns(), 914'001u);
  d.on_timer(914'001);
  const double recovered = rc0 / 2 + kLine / 2;
  EXPECT_EQ(d.fast_recoveries(), 1u);
  EXPECT_EQ(d.cuts(), 2u);
  // The cut follows the increase: the target is the recovered rate.
  EXPECT_DOUBLE_EQ(d.target_rate(), recovered);
  EXPECT_DOUBLE_EQ(d.current_rate(), recovered * (1 - d.alpha_at(914'001) / 2));
  EXPECT_EQ(d.stage(), 0u);
}

// Alpha brought up to date lazily equals their clock ticking every 1 us,
// written here as the loop it is.
TEST(DcqcnMlx, AlphaMatchesAClockTickingEveryUpdate) {
  auto d = make();
  const std::vector<uint64_t> cnps = {5'000,  5'300,  9'999,   10'000,
                                      10'001, 47'250, 300'000, 300'500};
  d.on_cnp(cnps[0], cnp());
  double alpha = 1.0;
  bool flag = false;
  size_t next = 1;
  for (uint64_t tick = cnps[0] + 1'000; tick <= 400'000; tick += 1'000) {
    while (next < cnps.size() && cnps[next] < tick) {
      d.on_cnp(cnps[next], cnp());
      flag = true;
      ++next;
    }
    alpha = flag ? kKeep * alpha + 1.0 / 256 : kKeep * alpha;
    flag = false;
    EXPECT_DOUBLE_EQ(d.alpha_at(tick), alpha) << tick;
  }
}

TEST(DcqcnMlx, UeAwareHoldsTheTimersIncreases) {
  DcqcnParams p = floodgate_ns3();
  p.ue_aware = true;
  auto d = make(p);
  d.on_cnp(10'000, cnp());
  d.on_timer(14'001);
  const double rc = d.current_rate();
  Segment ue;
  ue.kind = SegmentKind::kAck;
  ue.ue_echo = true;
  d.on_ack(20'000, ue, AckInfo{});
  d.on_timer(914'001);
  EXPECT_EQ(d.held_events(), 1u);
  EXPECT_DOUBLE_EQ(d.current_rate(), rc);
  EXPECT_EQ(d.stage(), 0u);
  EXPECT_EQ(d.timer_due_ns(), 1'814'001u);
}

TEST(DcqcnMlx, NeverBelowTheMinimumRate) {
  auto d = make();
  d.on_cnp(0, cnp());
  for (uint64_t t = 4'001; t < 4'001 + 400 * 4'000; t += 4'000) {
    d.on_cnp(t - 1, cnp());
    d.on_timer(t);
  }
  EXPECT_DOUBLE_EQ(d.current_rate(), 100e6);
  EXPECT_EQ(d.rate_bps(), 100'000'000u);
}

}  // namespace
}  // namespace sluice
