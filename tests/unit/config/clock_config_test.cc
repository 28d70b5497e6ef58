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
  EXPECT_EQ(r.config.seed, 1u);
}

TEST(ClockConfig, ExactTimeOnAFabricOfCaptureFilesAndLinks) {
  const ConfigResult r =
      load_config_string(std::string("clock: {mode: exact}\nseed: 42") + kReplayFabric, "t.yaml");
  ASSERT_TRUE(r.ok()) << errors_of(r)[0];
  EXPECT_EQ(r.config.clock.mode, ClockMode::kExact);
  EXPECT_EQ(r.config.seed, 42u);
}

TEST(ClockConfig, ExactTimeRefusesADevicePortByName) {
  const ConfigResult r = load_config_string(R"(clock: {mode: exact}
switches:
  - name: s1
    ports:
      - {name: h0, role: host, rate: 10Gbps, pcap: {rx: h0.pcap}}
      - {name: eth, role: host, rate: 0, device: "net_af_packet0,iface=veth0"}
)",
                                            "t.yaml");
  EXPECT_EQ(errors_of(r),
            (std::vector<std::string>{
                "t.yaml:1: clock.mode: exact fabric time needs every port to be a capture-file "
                "port or an internal link, but s1/eth is device \"net_af_packet0,iface=veth0\", "
                "which keeps the machine's time"}));
}

TEST(ClockConfig, ExactTimeNeedsARateOnEveryPort) {
  const ConfigResult r = load_config_string(R"(clock: {mode: exact}
switches:
  - name: s1
    ports:
      - {name: h0, role: host, rate: 10Gbps, pcap: {rx: h0.pcap}}
      - {name: up, role: switch, rate: 0, link: s2/down}
  - name: s2
    ports:
      - {name: down, role: switch, rate: 0, link: s1/up}
)",
                                            "t.yaml");
  ASSERT_EQ(errors_of(r).size(), 2u) << errors_of(r)[0];
  EXPECT_NE(errors_of(r)[0].find("switches[0].ports[1].rate: exact fabric time needs a rate on "
                                 "every port (s1/up has none"),
            std::string::npos)
      << errors_of(r)[0];
}

// A host link's delay is exact time's alone; in real time a replaying
// host's frame enters the switch as its NIC starts it.
TEST(ClockConfig, HostLinkDelayOnlyInExactTime) {
  const std::string fabric = R"(
switches:
  - name: s1
    ports:
      - {name: h0, role: host, rate: 10Gbps, delay: 1us, pcap: {rx: h0.pcap}}
      - {name: h1, role: host, rate: 10Gbps, pcap: {tx: h1.pcap}}
)";
  const ConfigResult exact = load_config_string("clock: {mode: exact}" + fabric, "t.yaml");
  ASSERT_TRUE(exact.ok()) << errors_of(exact)[0];
  EXPECT_EQ(exact.config.switches[0].ports[0].link_delay_ns, 1'000u);
  const ConfigResult real = load_config_string(fabric, "t.yaml");
  ASSERT_EQ(errors_of(real).size(), 1u);
  EXPECT_NE(errors_of(real)[0].find("is modelled in exact fabric time only"), std::string::npos)
      << errors_of(real)[0];
}

TEST(ClockConfig, EcmpHashIsPerSwitchUnlessSymmetric) {
  const ConfigResult plain = load_config_string(kReplayFabric, "t.yaml");
  ASSERT_TRUE(plain.ok()) << errors_of(plain)[0];
  EXPECT_EQ(plain.config.ecmp_hash, EcmpHashing::kPerSwitch);
  const ConfigResult sym =
      load_config_string(std::string("ecmp_hash: symmetric") + kReplayFabric, "t.yaml");
  ASSERT_TRUE(sym.ok()) << errors_of(sym)[0];
  EXPECT_EQ(sym.config.ecmp_hash, EcmpHashing::kSymmetric);
  const ConfigResult bad =
      load_config_string(std::string("ecmp_hash: random") + kReplayFabric, "t.yaml");
  EXPECT_EQ(errors_of(bad),
            (std::vector<std::string>{"t.yaml:1: ecmp_hash: expected one of per-switch, symmetric, "
                                      "got \"random\""}));
}

TEST(ClockConfig, BadValuesAreNamed) {
  const ConfigResult r = load_config_string(
      std::string("clock: {mode: warp, tick: 1}\nseed: -3") + kReplayFabric, "t.yaml");
  EXPECT_EQ(errors_of(r),
            (std::vector<std::string>{
                "t.yaml:1: clock.tick: unknown key \"tick\"; allowed keys: mode, max_step",
                "t.yaml:1: clock.mode: expected one of real, exact, got \"warp\"",
                "t.yaml:2: seed: expected an integer between 0 and 4294967295, got \"-3\""}));
}

// Virtual time is gone; its configurations are told what replaces it.
TEST(ClockConfig, VirtualTimeSaysWhatReplacedIt) {
  const ConfigResult r = load_config_string(
      std::string("clock: {mode: virtual, max_step: 5us}") + kReplayFabric, "t.yaml");
  EXPECT_EQ(errors_of(r),
            (std::vector<std::string>{
                "t.yaml:1: clock.mode: virtual time was replaced by exact fabric time: give "
                "\"exact\" (docs/emulator.md, \"Fabric time\")",
                "t.yaml:1: clock.max_step: no longer used: exact fabric time has no step (remove "
                "it)"}));
}

}  // namespace
}  // namespace sluice
