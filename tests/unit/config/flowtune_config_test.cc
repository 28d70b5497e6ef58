// The flowtune: section of a switch: defaults, every key, located errors for
// bad values, and the combinations --check refuses (an edge needs host
// ports; not with Floodgate; not in virtual time).
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "lib/config/config_loader.h"
#include "tests/unit/config/config_errors.h"

namespace sluice {
namespace {

std::string with_flowtune(const std::string& switch_extra, const std::string& role = "host",
                          const std::string& top = "") {
  return top +
         "switches:\n"
         "  - name: s1\n" +
         switch_extra +
         "    ports:\n"
         "      - {name: p0, device: net_null0, role: " +
         role +
         ", rate: 10Gbps}\n"
         "      - {name: p1, device: net_null1, role: switch, rate: 10Gbps}\n";
}

std::vector<std::string> errors_of(const std::string& yaml) {
  return error_strings(load_config_string(yaml, "t.yaml"));
}

TEST(FlowtuneConfig, OffWithoutTheSectionWithTheDocumentedDefaults) {
  const ConfigResult r = load_config_string(with_flowtune(""), "t.yaml");
  ASSERT_TRUE(r.ok());
  const FlowtuneConfig& f = r.config.switches[0].flowtune;
  EXPECT_FALSE(f.enabled);
  EXPECT_EQ(f.allocator_ip, 0x7F000001u);
  EXPECT_EQ(f.allocator_port, 9750);
  EXPECT_EQ(f.idle_gap_ns, 100'000u);
  EXPECT_EQ(f.lease_ns, 10'000'000u);
  EXPECT_EQ(f.flows, 4096u);
  EXPECT_EQ(f.max_held_packets, 64u);
  EXPECT_EQ(f.ecn_threshold_bytes, 30'000u);
  EXPECT_EQ(f.weight, 1u);
}

TEST(FlowtuneConfig, EveryKey) {
  const ConfigResult r = load_config_string(with_flowtune("    flowtune:\n"
                                                          "      allocator: 10.1.2.3:9999\n"
                                                          "      idle_gap: 500us\n"
                                                          "      lease: 20ms\n"
                                                          "      flows: 1024\n"
                                                          "      max_held_packets: 16\n"
                                                          "      ecn_threshold: 10KB\n"
                                                          "      weight: 3\n"),
                                            "t.yaml");
  ASSERT_TRUE(r.ok()) << ::testing::PrintToString(error_strings(r));
  const FlowtuneConfig& f = r.config.switches[0].flowtune;
  EXPECT_TRUE(f.enabled);
  EXPECT_EQ(f.allocator_ip, 0x0A010203u);
  EXPECT_EQ(f.allocator_port, 9999);
  EXPECT_EQ(f.idle_gap_ns, 500'000u);
  EXPECT_EQ(f.lease_ns, 20'000'000u);
  EXPECT_EQ(f.flows, 1024u);
  EXPECT_EQ(f.max_held_packets, 16u);
  EXPECT_EQ(f.ecn_threshold_bytes, 10'000u);
  EXPECT_EQ(f.weight, 3u);
}

TEST(FlowtuneConfig, BadValuesAreReportedWithTheirLineAndKey) {
  const std::vector<std::string> e =
      errors_of(with_flowtune("    flowtune:\n"
                              "      allocator: localhost:9750\n"
                              "      flows: 1000\n"
                              "      weight: 0\n"
                              "      gap: 1ms\n"));
  ASSERT_EQ(e.size(), 4u) << ::testing::PrintToString(e);
  EXPECT_EQ(e[0],
            "t.yaml:4: switches[0].flowtune.allocator: expected an IPv4 address and UDP port "
            "such as 127.0.0.1:9750, got \"localhost:9750\"");
  EXPECT_EQ(e[1], "t.yaml:5: switches[0].flowtune.flows: expected a power of two, got 1000");
  EXPECT_NE(e[2].find("t.yaml:6: switches[0].flowtune.weight: expected an integer between 1"),
            std::string::npos)
      << e[2];
  EXPECT_NE(e[3].find("t.yaml:7: switches[0].flowtune.gap: unknown key \"gap\""), std::string::npos)
      << e[3];
}

TEST(FlowtuneConfig, RefusedWithoutAHostPortWithFloodgateAndInExactTime) {
  EXPECT_EQ(errors_of(with_flowtune("    flowtune: {}\n", "switch")),
            (std::vector<std::string>{
                "t.yaml:3: switches[0].flowtune: flowtune paces what hosts send into an edge "
                "switch, and switch \"s1\" has no host-facing port (role: host)",
            }));
  const std::vector<std::string> fg =
      errors_of(with_flowtune("    flowtune: {}\n"
                              "    floodgate: {}\n"));
  ASSERT_FALSE(fg.empty());
  EXPECT_NE(fg.back().find("flowtune and floodgate on one switch are not supported"),
            std::string::npos)
      << ::testing::PrintToString(fg);
  const std::vector<std::string> vt =
      errors_of(with_flowtune("    flowtune: {}\n", "host", "clock: {mode: exact}\n"));
  bool found = false;
  for (const std::string& s : vt)
    found |= s.find("flowtune needs clock.mode real") != std::string::npos;
  EXPECT_TRUE(found) << ::testing::PrintToString(vt);
}

}  // namespace
}  // namespace sluice
