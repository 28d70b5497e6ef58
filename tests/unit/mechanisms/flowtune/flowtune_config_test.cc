// The flowtune: section of a switch and the top-level flowtune_allocator:
// defaults, every key, located errors for bad values, and the combinations
// --check refuses (an edge needs host ports; not with Floodgate; exact time
// needs the allocator in the fabric, which needs exact time and one host
// rate, and no UDP allocator beside it).
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

TEST(FlowtuneConfig, RefusedWithoutAHostPortAndWithFloodgate) {
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
}

// One exact-time edge with capture-file hosts (exact time refuses devices).
std::string exact_edge(const std::string& top, const std::string& flowtune = "{}",
                       const std::string& rate1 = "10Gbps") {
  return "clock: {mode: exact}\n" + top +
         "switches:\n"
         "  - name: s1\n"
         "    flowtune: " +
         flowtune +
         "\n"
         "    ports:\n"
         "      - {name: h0, role: host, rate: 10Gbps, pcap: {tx: h0.pcap}}\n"
         "      - {name: h1, role: host, rate: " +
         rate1 + ", pcap: {tx: h1.pcap}}\n";
}

TEST(FlowtuneConfig, ExactTimeNeedsTheAllocatorInTheFabric) {
  EXPECT_EQ(errors_of(exact_edge("")),
            (std::vector<std::string>{
                "t.yaml:4: switches[0].flowtune: flowtune in exact fabric time needs the "
                "allocator in the fabric: add a top-level flowtune_allocator section "
                "(sluice-allocator over UDP keeps the machine's clock, so it runs with "
                "clock.mode real only)",
            }));
  const ConfigResult r = load_config_string(exact_edge("flowtune_allocator: {}\n"), "t.yaml");
  ASSERT_TRUE(r.ok()) << ::testing::PrintToString(error_strings(r));
  const FlowtuneAllocatorConfig& a = r.config.flowtune_allocator;
  EXPECT_TRUE(a.enabled);
  EXPECT_EQ(a.control_delay_ns, 8'500u);
  EXPECT_EQ(a.iteration_ns, 10'000u);
  EXPECT_DOUBLE_EQ(a.threshold, 0.01);
  EXPECT_EQ(a.host_rate_bps, 0u);
  EXPECT_EQ(a.hosts, 1024u);
  EXPECT_EQ(a.flows, 0u);
  EXPECT_FALSE(load_config_string(with_flowtune(""), "t.yaml").config.flowtune_allocator.enabled);
}

TEST(FlowtuneConfig, EveryAllocatorKey) {
  const ConfigResult r = load_config_string(exact_edge("flowtune_allocator:\n"
                                                       "  control_delay: 2.5us\n"
                                                       "  iteration: 20us\n"
                                                       "  threshold: 0.05\n"
                                                       "  host_rate: 1Gbps\n"
                                                       "  hosts: 64\n"
                                                       "  flows: 5000\n"),
                                            "t.yaml");
  ASSERT_TRUE(r.ok()) << ::testing::PrintToString(error_strings(r));
  const FlowtuneAllocatorConfig& a = r.config.flowtune_allocator;
  EXPECT_EQ(a.control_delay_ns, 2'500u);
  EXPECT_EQ(a.iteration_ns, 20'000u);
  EXPECT_DOUBLE_EQ(a.threshold, 0.05);
  EXPECT_EQ(a.host_rate_bps, 1'000'000'000u);
  EXPECT_EQ(a.hosts, 64u);
  EXPECT_EQ(a.flows, 5000u);
}

TEST(FlowtuneConfig, AllocatorRefusals) {
  // Real time: the UDP allocator's business.
  const std::vector<std::string> real =
      errors_of(with_flowtune("    flowtune: {}\n", "host", "flowtune_allocator: {}\n"));
  EXPECT_EQ(real, (std::vector<std::string>{
                      "t.yaml:1: flowtune_allocator: the allocator in the fabric runs on exact "
                      "fabric time (clock.mode exact); in real time run sluice-allocator and give "
                      "its address in switches[].flowtune.allocator",
                  }));
  // Both allocators named.
  EXPECT_EQ(errors_of(exact_edge("flowtune_allocator: {}\n", "{allocator: 127.0.0.1:9750}")),
            (std::vector<std::string>{
                "t.yaml:5: switches[0].flowtune.allocator: names a sluice-allocator over UDP, "
                "but flowtune_allocator runs the allocator in the fabric: remove one of them",
            }));
  // Host ports of two rates, and no host_rate to say which the allocator uses.
  EXPECT_EQ(errors_of(exact_edge("flowtune_allocator: {}\n", "{}", "1Gbps")),
            (std::vector<std::string>{
                "t.yaml:2: flowtune_allocator: the flowtune edges' host ports have different "
                "rates (1000000000 bit/s, 10000000000 bit/s): give host_rate, the capacity the "
                "allocator gives every host link",
            }));
  EXPECT_TRUE(load_config_string(
                  exact_edge("flowtune_allocator: {host_rate: 1Gbps}\n", "{}", "1Gbps"), "t.yaml")
                  .ok());
  // A back-to-back allocator would run forever at one instant.
  const std::vector<std::string> zero =
      errors_of(exact_edge("flowtune_allocator: {iteration: 0}\n"));
  ASSERT_EQ(zero.size(), 1u);
  EXPECT_NE(zero[0].find("t.yaml:2: flowtune_allocator.iteration: expected"), std::string::npos)
      << zero[0];
}

}  // namespace
}  // namespace sluice
