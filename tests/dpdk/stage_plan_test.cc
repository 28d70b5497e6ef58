// Which optional per-packet steps a port's packets take, and which module
// takes each, from the switch's configuration (switch/path/stage_plan.h).
#include "switch/path/stage_plan.h"

#include <gtest/gtest.h>

#include "switch/mechanisms/registry.h"

namespace sluice {
namespace {

bool any(const StagePlan& p, Step s) { return p.steps[static_cast<unsigned>(s)] != 0; }

TEST(StagePlan, PlainSwitchTakesNoOptionalStep) {
  SwitchConfig sw;
  sw.ports.emplace_back();
  const StagePlan p = plan_stages(sw, sw.ports[0]);
  for (unsigned s = 0; s < static_cast<unsigned>(Step::kCount); ++s)
    EXPECT_FALSE(any(p, static_cast<Step>(s)));
  EXPECT_EQ(p.queue_choice, kClassQueues);
  EXPECT_FALSE(p.departure);
  EXPECT_FALSE(p.data_shim);
  EXPECT_TRUE(p.straight());
  EXPECT_TRUE(p.cuts_through);
}

// `cut_through: false` keeps a port's packets queued in real time; exact
// time's straight path is its own (the same results either way).
TEST(StagePlan, CutThroughOffKeepsEveryPacketQueued) {
  for (bool bfc : {false, true}) {
    SwitchConfig sw;
    sw.bfc.enabled = bfc;
    sw.ports.emplace_back();
    sw.ports[0].cut_through = false;
    const StagePlan p = plan_stages(sw, sw.ports[0]);
    EXPECT_FALSE(p.cuts_through);
    EXPECT_EQ(p.straight(), !bfc);
  }
}

TEST(StagePlan, PfcOrPauseCountsAtAdmissionAndReleasesAtDeparture) {
  for (PfcGenerationMode mode : {PfcGenerationMode::kPfc, PfcGenerationMode::kPause}) {
    SwitchConfig sw;
    sw.pfc.mode = mode;
    sw.ports.emplace_back();
    const StagePlan p = plan_stages(sw, sw.ports[0]);
    EXPECT_TRUE(p.takes(Step::kAccount, PfcModule::kId));
    EXPECT_TRUE(p.takes(Step::kRelease, PfcModule::kId));
    EXPECT_EQ(p.queue_choice, kClassQueues);
    EXPECT_TRUE(p.departure);
    // Its count at the ingress is an admission step: every packet queues.
    EXPECT_FALSE(p.cuts_through);
    EXPECT_FALSE(p.straight());
  }
}

TEST(StagePlan, BfcChoosesQueuesOnEveryPortOfItsSwitch) {
  SwitchConfig sw;
  sw.bfc.enabled = true;
  sw.ports.resize(2);
  sw.ports[1].role = PortRole::kSwitch;
  for (const PortConfig& port : sw.ports) {
    const StagePlan p = plan_stages(sw, port);
    EXPECT_FALSE(any(p, Step::kAccount));
    EXPECT_EQ(p.queue_choice, BfcModule::kId);
    EXPECT_TRUE(p.takes(Step::kDepart, BfcModule::kId));
    EXPECT_TRUE(p.departure);
    // The upstream queue travels in the shim toward switches only.
    EXPECT_EQ(p.data_shim, port.role == PortRole::kSwitch);
    // Its flow table's choice may pass (kChoiceAtPass): real time cuts
    // through, taking BFC's enqueue and departure at once, and no other
    // module's step; exact time's straight path takes no step.
    EXPECT_TRUE(p.cuts_through);
    EXPECT_FALSE(p.pass_steps);
    EXPECT_FALSE(p.straight());
  }
  // With TCD beside it, TCD's schedule and depart steps run at the pass.
  sw.tcd.enabled = true;
  EXPECT_TRUE(plan_stages(sw, sw.ports[1]).cuts_through);
  EXPECT_TRUE(plan_stages(sw, sw.ports[1]).pass_steps);
  // With PFC's admission count, every packet queues.
  sw.tcd.enabled = false;
  sw.pfc.mode = PfcGenerationMode::kPfc;
  EXPECT_FALSE(plan_stages(sw, sw.ports[1]).cuts_through);
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
  EXPECT_FALSE(host.takes(Step::kGate, FloodgateModule::kId));
  EXPECT_TRUE(host.takes(Step::kDepart, FloodgateModule::kId));
  EXPECT_TRUE(host.takes(Step::kDropped, FloodgateModule::kId));
  EXPECT_TRUE(host.departure);
  EXPECT_TRUE(up.takes(Step::kGate, FloodgateModule::kId));
  EXPECT_TRUE(up.takes(Step::kDepart, FloodgateModule::kId));
  EXPECT_FALSE(any(up, Step::kAccount));
  EXPECT_EQ(up.queue_choice, kClassQueues);
  // Its depart step, which counts credit, may run at the pass
  // (kStepsAtPass), so a host port cuts through; the window gates toward
  // switches, which do not.
  EXPECT_TRUE(host.cuts_through);
  EXPECT_TRUE(host.pass_steps);
  EXPECT_FALSE(up.cuts_through);
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
    EXPECT_TRUE(p.takes(Step::kSchedule, TcdModule::kId));
    EXPECT_TRUE(p.takes(Step::kDepart, TcdModule::kId));
    EXPECT_TRUE(p.departure);
    EXPECT_FALSE(any(p, Step::kAccount) || any(p, Step::kGate) || any(p, Step::kRefuse));
    // Its steps may run at the instant a packet passes (kStepsAtPass):
    // real time cuts through; exact time's straight path takes no step.
    EXPECT_TRUE(p.cuts_through);
    EXPECT_FALSE(p.straight());
    EXPECT_FALSE(p.pass_meta);  // the mark reads the packet's IP header only
    EXPECT_TRUE(p.pass_steps);
  }
  sw.pfc.mode = PfcGenerationMode::kPfc;  // with PFC's admission count, queued
  EXPECT_FALSE(plan_stages(sw, sw.ports[0]).cuts_through);
}

// DIBS detours at admission toward any egress: the last hop toward a host
// is where an incast overflows.
TEST(StagePlan, DibsDetoursRefusalsOnEveryPortOfItsSwitchAndCountsExitsTowardHosts) {
  SwitchConfig sw;
  sw.dibs.enabled = true;
  sw.ports.resize(2);
  sw.ports[1].role = PortRole::kSwitch;
  for (const PortConfig& port : sw.ports) {
    const StagePlan p = plan_stages(sw, port);
    EXPECT_TRUE(p.takes(Step::kRefuse, DibsModule::kId));
    EXPECT_FALSE(any(p, Step::kAccount) || any(p, Step::kGate));
    // Only a host-facing port (where packets leave the fabric) departs:
    // it adds each packet's detour count to the histogram.
    const bool host = port.role == PortRole::kHost;
    EXPECT_EQ(p.takes(Step::kDepart, DibsModule::kId), host);
    EXPECT_EQ(p.departure, host);
    EXPECT_FALSE(p.data_shim);  // max_detours 0: the count needs no shim
    // A refusal's step and the exit count run as well for a packet that
    // passes: real time cuts through.
    EXPECT_TRUE(p.cuts_through);
    EXPECT_FALSE(p.straight());
    // The exit count reads whether the packet carries a count.
    EXPECT_EQ(p.pass_meta, host);
  }
  sw.dibs.max_detours = 2;  // now the count travels toward switches
  EXPECT_FALSE(plan_stages(sw, sw.ports[0]).data_shim);
  EXPECT_TRUE(plan_stages(sw, sw.ports[1]).data_shim);
  sw.dibs.enabled = false;
  EXPECT_FALSE(plan_stages(sw, sw.ports[1]).takes(Step::kRefuse, DibsModule::kId));
}

// INT stamps at departure on every port of a switch with `int`.
TEST(StagePlan, IntStampsAtDepartureWhereOn) {
  SwitchConfig sw;
  sw.ports.emplace_back();
  EXPECT_FALSE(plan_stages(sw, sw.ports[0]).takes(Step::kDepart, IntModule::kId));
  sw.int_telemetry = true;
  EXPECT_TRUE(plan_stages(sw, sw.ports[0]).takes(Step::kDepart, IntModule::kId));
  // INT does not declare kStepsAtPass: every packet it stamps queues.
  EXPECT_FALSE(plan_stages(sw, sw.ports[0]).cuts_through);
}

}  // namespace
}  // namespace sluice
