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
  }
}

}  // namespace
}  // namespace sluice
