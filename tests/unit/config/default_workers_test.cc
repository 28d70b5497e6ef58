// The port-to-worker assignment without a workers: section.
#include "lib/config/default_workers.h"

#include <gtest/gtest.h>

#include <vector>

namespace sluice {
namespace {

SwitchConfig switch_with(std::vector<PortRole> roles, bool floodgate) {
  SwitchConfig sw;
  sw.floodgate.enabled = floodgate;
  for (PortRole r : roles) {
    sw.ports.emplace_back();
    sw.ports.back().role = r;
  }
  return sw;
}

constexpr PortRole kH = PortRole::kHost;
constexpr PortRole kS = PortRole::kSwitch;

TEST(DefaultWorkers, RoundRobinInConfigurationOrder) {
  Config c;
  c.switches.push_back(switch_with({kH, kS, kS}, false));
  c.switches.push_back(switch_with({kS, kH}, false));
  EXPECT_EQ(default_port_workers(c, 2), (std::vector<unsigned>{0, 1, 0, 1, 0}));
  EXPECT_EQ(default_port_workers(c, 1), (std::vector<unsigned>{0, 0, 0, 0, 0}));
  EXPECT_TRUE(default_port_workers(c, 0).empty());
}

TEST(DefaultWorkers, AFloodgateSwitchKeepsItsSwitchFacingPortsTogether) {
  Config c;
  c.switches.push_back(switch_with({kH, kS, kH, kS, kS}, true));
  c.switches.push_back(switch_with({kS, kS}, false));
  // Host ports still alternate; the uplinks all follow the first (slot 1).
  EXPECT_EQ(default_port_workers(c, 2), (std::vector<unsigned>{0, 1, 0, 1, 1, 1, 0}));
  EXPECT_EQ(default_port_workers(c, 3), (std::vector<unsigned>{0, 1, 2, 1, 1, 2, 0}));
}

}  // namespace
}  // namespace sluice
