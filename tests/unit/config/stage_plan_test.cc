// Which optional per-packet steps a port's packets take, from the switch's
// configuration.
#include "lib/config/stage_plan.h"

#include <gtest/gtest.h>

namespace sluice {
namespace {

TEST(StagePlan, PlainSwitchTakesNoOptionalStep) {
  SwitchConfig sw;
  sw.ports.emplace_back();
  const StagePlan p = plan_stages(sw, sw.ports[0]);
  EXPECT_FALSE(p.pfc);
  EXPECT_FALSE(p.bfc);
  EXPECT_FALSE(p.fg_window);
  EXPECT_FALSE(p.fg_credit);
  EXPECT_FALSE(p.tcd);
  EXPECT_FALSE(p.dibs);
  EXPECT_FALSE(p.departure);
}

TEST(StagePlan, PfcOrPauseCountsAtAdmissionAndReleasesAtDeparture) {
  for (PfcGenerationMode mode : {PfcGenerationMode::kPfc, PfcGenerationMode::kPause}) {
    SwitchConfig sw;
    sw.pfc.mode = mode;
    sw.ports.emplace_back();
    const StagePlan p = plan_stages(sw, sw.ports[0]);
    EXPECT_TRUE(p.pfc);
    EXPECT_FALSE(p.bfc);
    EXPECT_TRUE(p.departure);
  }
}

TEST(StagePlan, BfcChoosesQueuesOnEveryPortOfItsSwitch) {
  SwitchConfig sw;
  sw.bfc.enabled = true;
  sw.ports.resize(2);
  sw.ports[1].role = PortRole::kSwitch;
  for (const PortConfig& port : sw.ports) {
    const StagePlan p = plan_stages(sw, port);
    EXPECT_FALSE(p.pfc);
    EXPECT_TRUE(p.bfc);
    EXPECT_TRUE(p.departure);
    // The upstream queue travels in the shim toward switches only.
    EXPECT_EQ(p.data_shim, port.role == PortRole::kSwitch);
  }
}

// The window applies toward switch-facing ports only; credit is earned
// wherever a packet from a switch-facing port leaves, host ports included.
TEST(StagePlan, FloodgateWindowsTowardSwitchesAndCreditOnEveryPort) {
  SwitchConfig sw;
  sw.floodgate.enabled = true;
  sw.ports.resize(2);
  sw.ports[1].role = PortRole::kSwitch;
  const StagePlan host = plan_stages(sw, sw.ports[0]);
  const StagePlan up = plan_stages(sw, sw.ports[1]);
  EXPECT_FALSE(host.fg_window);
  EXPECT_TRUE(host.fg_credit);
  EXPECT_TRUE(host.departure);
  EXPECT_TRUE(up.fg_window);
  EXPECT_TRUE(up.fg_credit);
  EXPECT_FALSE(up.pfc || up.bfc);
}

// TCD marks at departure on every port of its switch, with or without a
// pausing mechanism, and adds no admission step.
TEST(StagePlan, TcdMarksAtDepartureOnEveryPortOfItsSwitch) {
  SwitchConfig sw;
  sw.tcd.enabled = true;
  sw.ports.resize(2);
  sw.ports[1].role = PortRole::kSwitch;
  for (const PortConfig& port : sw.ports) {
    const StagePlan p = plan_stages(sw, port);
    EXPECT_TRUE(p.tcd);
    EXPECT_TRUE(p.departure);
    EXPECT_FALSE(p.pfc || p.bfc || p.fg_window || p.fg_credit);
  }
}

// DIBS detours at admission toward any egress: the last hop toward a host
// is where an incast overflows. It adds no departure step.
TEST(StagePlan, DibsDetoursRefusalsOnEveryPortOfItsSwitchAndCountsExitsTowardHosts) {
  SwitchConfig sw;
  sw.dibs.enabled = true;
  sw.ports.resize(2);
  sw.ports[1].role = PortRole::kSwitch;
  for (const PortConfig& port : sw.ports) {
    const StagePlan p = plan_stages(sw, port);
    EXPECT_TRUE(p.dibs);
    EXPECT_FALSE(p.pfc || p.bfc || p.fg_window || p.fg_credit || p.tcd);
    // Only a host-facing port (where packets leave the fabric) departs:
    // it adds each packet's detour count to the histogram.
    const bool host = port.role == PortRole::kHost;
    EXPECT_EQ(p.dibs_exit, host);
    EXPECT_EQ(p.departure, host);
    EXPECT_FALSE(p.data_shim);  // max_detours 0: the count needs no shim
  }
  sw.dibs.max_detours = 2;  // now the count travels toward switches
  EXPECT_FALSE(plan_stages(sw, sw.ports[0]).data_shim);
  EXPECT_TRUE(plan_stages(sw, sw.ports[1]).data_shim);
  sw.dibs.enabled = false;
  EXPECT_FALSE(plan_stages(sw, sw.ports[1]).dibs);
}

}  // namespace
}  // namespace sluice
