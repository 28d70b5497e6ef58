// The bfc: section of a switch, and the fifo key of internal links.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "lib/config/config_loader.h"
#include "tests/unit/config/config_errors.h"

namespace sluice {
namespace {

std::string with_bfc(const std::string& switch_extra, const std::string& p0_rate = "10Gbps") {
  return "switches:\n"
         "  - name: s1\n" +
         switch_extra +
         "    ports:\n"
         "      - name: p0\n"
         "        device: net_null0\n"
         "        role: host\n"
         "        rate: " +
         p0_rate +
         "\n"
         "      - name: p1\n"
         "        device: net_null1\n"
         "        role: switch\n"
         "        rate: 10Gbps\n";
}

std::vector<std::string> errors_of(const std::string& yaml) {
  return error_strings(load_config_string(yaml, "t.yaml"));
}

TEST(BfcConfig, OffWithoutTheSection) {
  const ConfigResult r = load_config_string(with_bfc(""), "t.yaml");
  ASSERT_TRUE(r.ok());
  const BfcConfig& b = r.config.switches[0].bfc;
  EXPECT_FALSE(b.enabled);
  EXPECT_EQ(b.assignment, BfcAssignmentKind::kDynamic);
  EXPECT_EQ(b.flow_table_factor, 100u);
  EXPECT_EQ(b.sticky_ns, 0u);
  EXPECT_EQ(b.bitmap_interval_ns, 0u);
  EXPECT_EQ(b.th_ns, 0u);
}

TEST(BfcConfig, TheSectionTurnsItOnAndEveryKeyIsRead) {
  const ConfigResult r = load_config_string(with_bfc("    bfc:\n"
                                                     "      assignment: stochastic\n"
                                                     "      flow_table_factor: 20\n"
                                                     "      sticky: 30us\n"
                                                     "      bitmap_interval: 1ms\n"
                                                     "      th: 2us\n"
                                                     "      no_backpressure:\n"
                                                     "        - {from: p1, to: [p0, p1]}\n"),
                                            "t.yaml");
  ASSERT_TRUE(r.ok()) << r.errors[0].to_string();
  const BfcConfig& b = r.config.switches[0].bfc;
  EXPECT_TRUE(b.enabled);
  EXPECT_EQ(b.assignment, BfcAssignmentKind::kStochastic);
  EXPECT_EQ(b.flow_table_factor, 20u);
  EXPECT_EQ(b.sticky_ns, 30'000u);
  EXPECT_EQ(b.bitmap_interval_ns, 1'000'000u);
  EXPECT_EQ(b.th_ns, 2'000u);
  ASSERT_EQ(b.no_backpressure.size(), 1u);
  EXPECT_EQ(b.no_backpressure[0].from, std::vector<std::string>{"p1"});
  EXPECT_EQ(b.no_backpressure[0].to, (std::vector<std::string>{"p0", "p1"}));
}

TEST(BfcConfig, EnabledFalseKeepsTheOtherKeys) {
  const ConfigResult r =
      load_config_string(with_bfc("    bfc: {enabled: false, assignment: single}\n"), "t.yaml");
  ASSERT_TRUE(r.ok());
  EXPECT_FALSE(r.config.switches[0].bfc.enabled);
  EXPECT_EQ(r.config.switches[0].bfc.assignment, BfcAssignmentKind::kSingle);
}

TEST(BfcConfig, BadValuesAreReportedWithTheirKey) {
  EXPECT_EQ(errors_of(with_bfc("    bfc:\n"
                               "      assignment: random\n"
                               "      flow_table_factor: 0\n"
                               "      sticky: soon\n"
                               "      no_backpressure:\n"
                               "        - {from: p1, to: p9}\n"
                               "        - {from: p1}\n")),
            (std::vector<std::string>{
                "t.yaml:4: switches[0].bfc.assignment: expected one of dynamic, stochastic, "
                "single, got \"random\"",
                "t.yaml:5: switches[0].bfc.flow_table_factor: expected an integer between 1 and "
                "10000, got \"0\"",
                "t.yaml:6: switches[0].bfc.sticky: expected a duration such as 10us, 500ns or "
                "1ms, got \"soon\"",
                "t.yaml:8: switches[0].bfc.no_backpressure[0].to: unknown port \"p9\" in switch "
                "\"s1\"",
                "t.yaml:9: switches[0].bfc.no_backpressure[1].to: missing required key \"to\"",
            }));
}

TEST(BfcConfig, ThMustBeAPositiveDuration) {
  EXPECT_EQ(errors_of(with_bfc("    bfc:\n"
                               "      th: 15KB\n")),
            (std::vector<std::string>{
                "t.yaml:4: switches[0].bfc.th: expected a duration such as 10us, 500ns or 1ms, "
                "got \"15KB\"",
            }));
  EXPECT_EQ(errors_of(with_bfc("    bfc: {th: 0us}\n")).size(), 1u);
  EXPECT_EQ(errors_of(with_bfc("    bfc: {th: -2us}\n")).size(), 1u);
}

TEST(BfcConfig, AcceptedWithPfcTowardHosts) {
  const ConfigResult r =
      load_config_string(with_bfc("    pfc: {mode: pfc}\n    bfc: {}\n"), "t.yaml");
  ASSERT_TRUE(r.ok()) << r.errors[0].to_string();
  EXPECT_TRUE(r.config.switches[0].bfc.enabled);
  EXPECT_EQ(r.config.switches[0].pfc.mode, PfcGenerationMode::kPfc);
}

TEST(BfcConfig, RefusedWithDscpOrAnUnshapedPort) {
  EXPECT_EQ(errors_of(with_bfc("    class_map: dscp\n"
                               "    bfc: {}\n",
                               "0")),
            (std::vector<std::string>{
                "t.yaml:4: switches[0].bfc: bfc assigns flows to queues itself: class_map must "
                "be fifo",
                "t.yaml:9: switches[0].ports[0].rate: bfc needs the port's rate (Th = hop_rtt x "
                "rate / active queues): expected a rate above 0",
            }));
}

TEST(BfcConfig, RefusedWithStrictPriority) {
  EXPECT_EQ(errors_of(with_bfc("    scheduler: strict\n"
                               "    bfc: {}\n")),
            (std::vector<std::string>{
                "t.yaml:3: switches[0].scheduler: bfc needs a round-robin scheduler among its "
                "queues (Th = hop_rtt x rate / active queues): scheduler must be drr",
            }));
  // The same scheduler without bfc, or drr with bfc, is fine.
  EXPECT_TRUE(errors_of(with_bfc("    scheduler: strict\n")).empty());
  EXPECT_TRUE(errors_of(with_bfc("    scheduler: drr\n    bfc: {}\n")).empty());
  EXPECT_TRUE(errors_of(with_bfc("    scheduler: strict\n    bfc: {enabled: false}\n")).empty());
}

TEST(LinkFifo, DefaultReadAndOnlyOnLinks) {
  const std::string yaml =
      "switches:\n"
      "  - name: a\n"
      "    ports:\n"
      "      - {name: x, link: b/y, fifo: 3us, role: switch, rate: 1Gbps}\n"
      "      - {name: h, device: net_null0, fifo: 3us, role: host, rate: 1Gbps}\n"
      "  - name: b\n"
      "    ports:\n"
      "      - {name: y, link: a/x, role: switch, rate: 1Gbps}\n";
  EXPECT_EQ(errors_of(yaml), (std::vector<std::string>{
                                 "t.yaml:5: switches[0].ports[1].fifo: \"fifo\" applies only to "
                                 "internal links (link:)"}));
  std::string ok = yaml;
  ok.erase(ok.find("      - {name: h"), ok.find("  - name: b") - ok.find("      - {name: h"));
  const ConfigResult r = load_config_string(ok, "t.yaml");
  ASSERT_TRUE(r.ok()) << r.errors[0].to_string();
  EXPECT_EQ(r.config.switches[0].ports[0].link_fifo_ns, 3'000u);
  EXPECT_EQ(r.config.switches[1].ports[0].link_fifo_ns, 10'000u);
}

}  // namespace
}  // namespace sluice
