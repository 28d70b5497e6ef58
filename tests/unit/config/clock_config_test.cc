// The top-level clock section (docs/configuration.md, "clock").
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "lib/config/config_loader.h"
#include "tests/unit/config/config_errors.h"

namespace sluice {
namespace {

std::vector<std::string> errors_of(const ConfigResult& r) { return error_strings(r); }

constexpr const char* kReplayFabric = R"(
switches:
  - name: s1
    ports:
      - {name: h0, role: host, rate: 10Gbps, pcap: {rx: h0.pcap}}
      - {name: up, role: switch, rate: 10Gbps, link: s2/down}
  - name: s2
    ports:
      - {name: down, role: switch, rate: 10Gbps, link: s1/up}
      - {name: h1, role: host, rate: 10Gbps, pcap: {tx: h1.pcap}}
)";

TEST(ClockConfig, RealTimeByDefault) {
  const ConfigResult r = load_config_string(kReplayFabric, "t.yaml");
  ASSERT_TRUE(r.ok()) << errors_of(r)[0];
  EXPECT_EQ(r.config.clock.mode, ClockMode::kReal);
  EXPECT_EQ(r.config.clock.max_step_ns, 5'000u);
}

TEST(ClockConfig, VirtualTimeOnAFabricOfCaptureFilesAndLinks) {
  const ConfigResult r = load_config_string(
      std::string("clock: {mode: virtual, max_step: 2us}") + kReplayFabric, "t.yaml");
  ASSERT_TRUE(r.ok()) << errors_of(r)[0];
  EXPECT_EQ(r.config.clock.mode, ClockMode::kVirtual);
  EXPECT_EQ(r.config.clock.max_step_ns, 2'000u);
}

TEST(ClockConfig, VirtualTimeRefusesADevicePort) {
  const ConfigResult r = load_config_string(R"(clock: {mode: virtual}
switches:
  - name: s1
    ports:
      - {name: h0, role: host, rate: 10Gbps, pcap: {rx: h0.pcap}}
      - {name: eth, role: host, rate: 0, device: "net_af_packet0,iface=veth0"}
)",
                                            "t.yaml");
  EXPECT_EQ(errors_of(r),
            (std::vector<std::string>{
                "t.yaml:1: clock.mode: virtual time needs every port to be a capture-file port "
                "or an internal link, but s1/eth is device \"net_af_packet0,iface=veth0\", which "
                "keeps the machine's time"}));
}

TEST(ClockConfig, BadValuesAreNamed) {
  const ConfigResult r = load_config_string(
      std::string("clock: {mode: warp, max_step: 2ms, tick: 1}") + kReplayFabric, "t.yaml");
  EXPECT_EQ(errors_of(r),
            (std::vector<std::string>{
                "t.yaml:1: clock.tick: unknown key \"tick\"; allowed keys: mode, max_step",
                "t.yaml:1: clock.mode: expected one of real, virtual, got \"warp\"",
                "t.yaml:1: clock.max_step: expected a value between 1us and 1ms, got \"2ms\""}));
}

}  // namespace
}  // namespace sluice
