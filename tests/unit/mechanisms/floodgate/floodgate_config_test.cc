// The floodgate: section of a switch: defaults, every key, and the checks
// that tie it to port rates, BFC and worker ownership.
#include <gtest/gtest.h>

#include <cstdio>
#include <string>
#include <vector>

#include "lib/config/config_loader.h"
#include "tests/unit/config/config_errors.h"

namespace sluice {
namespace {

std::string with_floodgate(const std::string& switch_extra, const std::string& host_rate = "10Gbps",
                           const std::string& uplink_rate = "10Gbps") {
  return "switches:\n"
         "  - name: s1\n" +
         switch_extra +
         "    ports:\n"
         "      - {name: p0, device: net_null0, role: host, rate: " +
         host_rate +
         "}\n"
         "      - {name: p1, device: net_null1, role: switch, rate: " +
         uplink_rate + "}\n";
}

std::vector<std::string> errors_of(const std::string& yaml) {
  return error_strings(load_config_string(yaml, "t.yaml"));
}

TEST(FloodgateConfig, OffWithoutTheSectionWithTheDocumentedDefaults) {
  const ConfigResult r = load_config_string(with_floodgate(""), "t.yaml");
  ASSERT_TRUE(r.ok());
  const FloodgateConfig& f = r.config.switches[0].floodgate;
  EXPECT_FALSE(f.enabled);
  EXPECT_DOUBLE_EQ(f.alpha, 1.5);
  EXPECT_EQ(f.credit_interval_ns, 10'000u);
  EXPECT_EQ(f.credit_threshold_bytes, 10'240u);
  EXPECT_EQ(f.voqs, 100u);
  EXPECT_EQ(f.voq_packets, 65'536u);
  EXPECT_EQ(f.max_destinations, 4'096u);
  EXPECT_TRUE(f.delay_credit);
  EXPECT_DOUBLE_EQ(f.delay_credit_factor, 1.5);
  EXPECT_FALSE(f.dst_pause);
  EXPECT_DOUBLE_EQ(f.dst_pause_factor, 1.5);
  EXPECT_EQ(f.dst_pause_hysteresis_bytes, 3'072u);
  EXPECT_EQ(f.voq_ecn_bytes, 0u);
  EXPECT_FALSE(f.sync);
  EXPECT_EQ(f.sync_interval_ns, 1'000'000u);
}

TEST(FloodgateConfig, EveryKeyIsReadAndTheSectionTurnsItOn) {
  const ConfigResult r = load_config_string(with_floodgate("    floodgate:\n"
                                                           "      alpha: 2\n"
                                                           "      credit_interval: 5us\n"
                                                           "      credit_threshold: 4KiB\n"
                                                           "      voqs: 8\n"
                                                           "      voq_packets: 1000\n"
                                                           "      max_destinations: 64\n"
                                                           "      delay_credit: false\n"
                                                           "      delay_credit_factor: 3\n"
                                                           "      dst_pause: true\n"
                                                           "      dst_pause_factor: 2.5\n"
                                                           "      dst_pause_hysteresis: 1500B\n"
                                                           "      voq_ecn: 30KB\n"
                                                           "      sync: true\n"
                                                           "      sync_interval: 200us\n"),
                                            "t.yaml");
  ASSERT_TRUE(r.ok()) << r.errors[0].to_string();
  const FloodgateConfig& f = r.config.switches[0].floodgate;
  EXPECT_TRUE(f.enabled);
  EXPECT_DOUBLE_EQ(f.alpha, 2.0);
  EXPECT_EQ(f.credit_interval_ns, 5'000u);
  EXPECT_EQ(f.credit_threshold_bytes, 4'096u);
  EXPECT_EQ(f.voqs, 8u);
  EXPECT_EQ(f.voq_packets, 1'000u);
  EXPECT_EQ(f.max_destinations, 64u);
  EXPECT_FALSE(f.delay_credit);
  EXPECT_DOUBLE_EQ(f.delay_credit_factor, 3.0);
  EXPECT_TRUE(f.dst_pause);
  EXPECT_DOUBLE_EQ(f.dst_pause_factor, 2.5);
  EXPECT_EQ(f.dst_pause_hysteresis_bytes, 1'500u);
  EXPECT_EQ(f.voq_ecn_bytes, 30'000u);
  EXPECT_TRUE(f.sync);
  EXPECT_EQ(f.sync_interval_ns, 200'000u);
}

TEST(FloodgateConfig, EnabledFalseIsAcceptedAndKeepsTheOtherKeys) {
  const ConfigResult r =
      load_config_string(with_floodgate("    floodgate: {enabled: false, voqs: 7}\n"), "t.yaml");
  ASSERT_TRUE(r.ok()) << r.errors[0].to_string();
  EXPECT_FALSE(r.config.switches[0].floodgate.enabled);
  EXPECT_EQ(r.config.switches[0].floodgate.voqs, 7u);
}

TEST(FloodgateConfig, BadValuesAreReportedWithTheirKey) {
  EXPECT_EQ(errors_of(with_floodgate("    floodgate:\n"
                                     "      alpha: 0\n"
                                     "      credit_interval: 10KB\n"
                                     "      voqs: 2000\n"
                                     "      dst_pause: maybe\n"
                                     "      windows: 10\n")),
            (std::vector<std::string>{
                "t.yaml:4: switches[0].floodgate.alpha: expected a number above 0 and at most "
                "1000, got \"0\"",
                "t.yaml:5: switches[0].floodgate.credit_interval: expected a duration such as "
                "10us, 500ns or 1ms, got \"10KB\"",
                "t.yaml:6: switches[0].floodgate.voqs: expected an integer between 1 and 1024, "
                "got \"2000\"",
                "t.yaml:7: switches[0].floodgate.dst_pause: expected true or false, got \"maybe\"",
                "t.yaml:8: switches[0].floodgate.windows: unknown key \"windows\"; allowed keys: "
                "enabled, alpha, credit_interval, credit_threshold, voqs, voq_packets, "
                "max_destinations, delay_credit, delay_credit_factor, dst_pause, "
                "dst_pause_factor, dst_pause_hysteresis, voq_ecn, sync, sync_interval",
            }));
}

TEST(FloodgateConfig, RefusedWithBfcAndWithoutTheRatesItSizesFrom) {
  EXPECT_EQ(errors_of(with_floodgate("    floodgate: {}\n"
                                     "    bfc: {}\n")),
            (std::vector<std::string>{
                "t.yaml:3: switches[0].floodgate: floodgate and bfc on one switch are not "
                "supported: both pace the same switch-facing links hop by hop, and their credits "
                "and pauses would not agree on what is in flight",
            }));
  // A host port needs a rate only for dst_pause; an uplink always does.
  EXPECT_EQ(errors_of(with_floodgate("    floodgate: {}\n", "0")), std::vector<std::string>{});
  EXPECT_EQ(errors_of(with_floodgate("    floodgate: {dst_pause: true}\n", "0", "0")),
            (std::vector<std::string>{
                "t.yaml:5: switches[0].ports[0].rate: floodgate dst_pause needs a host port's "
                "rate (threshold = dst_pause_factor x rate x hop_rtt): expected a rate above 0",
                "t.yaml:6: switches[0].ports[1].rate: floodgate needs a switch-facing port's rate "
                "(initial window = alpha x rate x hop_rtt + rate x credit_interval): expected a "
                "rate above 0",
            }));
}

TEST(FloodgateConfig, OneWorkerMustOwnEverySwitchFacingPort) {
  const std::string yaml =
      "switches:\n"
      "  - name: s1\n"
      "    floodgate: {}\n"
      "    ports:\n"
      "      - {name: h0, device: net_null0, role: host, rate: 10Gbps}\n"
      "      - {name: u0, device: net_null1, role: switch, rate: 10Gbps}\n"
      "      - {name: u1, device: net_null2, role: switch, rate: 10Gbps}\n"
      "workers:\n"
      "  - {lcore: 1, ports: [s1/h0, s1/u0]}\n"
      "  - {lcore: 2, ports: [s1/u1]}\n";
  const std::vector<std::string> errors = errors_of(yaml);
  ASSERT_EQ(errors.size(), 1u);
  EXPECT_EQ(errors[0],
            "t.yaml:10: workers[1]: floodgate: switch \"s1\" keeps one window table, so one "
            "worker must own all its switch-facing ports; u1 is not with the others (workers[0])");
  // Host ports may live elsewhere.
  std::string ok = yaml;
  ok.replace(ok.find("[s1/h0, s1/u0]"), 14, "[s1/u0, s1/u1]");
  ok.replace(ok.find("[s1/u1]"), 7, "[s1/h0]");
  EXPECT_EQ(errors_of(ok), std::vector<std::string>{});
}

// Windows are refilled only by the next switch's credit: an internal link
// with Floodgate at one end only is refused, once, whichever end has it.
TEST(FloodgateConfig, BothEndsOfAnInternalLinkMustRunIt) {
  const auto fabric = [](const char* a_extra, const char* b_extra) {
    return std::string("switches:\n"
                       "  - name: a\n") +
           a_extra +
           "    ports:\n"
           "      - {name: h, device: net_null0, role: host, rate: 10Gbps}\n"
           "      - {name: x, link: b/y, role: switch, rate: 10Gbps}\n"
           "  - name: b\n" +
           b_extra +
           "    ports:\n"
           "      - {name: y, link: a/x, role: switch, rate: 10Gbps}\n"
           "      - {name: r, device: net_null1, role: host, rate: 10Gbps}\n";
  };
  const std::string fg = "    floodgate: {}\n";
  EXPECT_EQ(errors_of(fabric(fg.c_str(), fg.c_str())), std::vector<std::string>{});
  EXPECT_EQ(errors_of(fabric("", "")), std::vector<std::string>{});
  const std::string msg =
      "switches[0].ports[1].link: floodgate on one end of an internal link only: switch \"%s\" "
      "runs it and \"%s\" does not, so \"%s\"'s windows toward \"%s\" would never be "
      "refilled by credit (give every switch of a Floodgate fabric a floodgate section)";
  const auto expect = [&](int line, const char* on, const char* off) {
    char buf[512];
    std::snprintf(buf, sizeof buf, msg.c_str(), on, off, on, off);
    return std::vector<std::string>{"t.yaml:" + std::to_string(line) + ": " + buf};
  };
  EXPECT_EQ(errors_of(fabric(fg.c_str(), "")), expect(6, "a", "b"));
  EXPECT_EQ(errors_of(fabric("", fg.c_str())), expect(5, "b", "a"));
}

}  // namespace
}  // namespace sluice
