// The pfc: section of a switch and the per-port pfc: opt-out.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "lib/config/config_loader.h"
#include "tests/unit/config/config_errors.h"

namespace sluice {
namespace {

std::string with_pfc(const std::string& pfc_block, const std::string& port_extra = "") {
  return "switches:\n"
         "  - name: s1\n" +
         pfc_block +
         "    ports:\n"
         "      - name: p0\n"
         "        device: net_null0\n"
         "        role: host\n"
         "        rate: 10Gbps\n" +
         port_extra;
}

std::vector<std::string> errors_of(const std::string& yaml) {
  return error_strings(load_config_string(yaml, "t.yaml"));
}

TEST(PfcConfig, DefaultsAreOffWithStaticThreshold) {
  const ConfigResult r = load_config_string(with_pfc(""), "t.yaml");
  ASSERT_TRUE(r.ok());
  const PfcConfig& p = r.config.switches[0].pfc;
  EXPECT_EQ(p.mode, PfcGenerationMode::kOff);
  EXPECT_EQ(p.xoff_bytes, 200'000u);
  EXPECT_FALSE(p.dynamic);
  EXPECT_EQ(p.quanta, 0xFFFF);
  EXPECT_EQ(p.priorities, 0xFF);
  EXPECT_TRUE(r.config.switches[0].ports[0].pfc.enabled);
}

TEST(PfcConfig, EveryKeyIsRead) {
  const ConfigResult r = load_config_string(with_pfc("    pfc:\n"
                                                     "      mode: pfc\n"
                                                     "      xoff: 64KiB\n"
                                                     "      hysteresis: 4KB\n"
                                                     "      quanta: 1000\n"
                                                     "      priorities: [0, 3]\n",
                                                     "        pfc: false\n"),
                                            "t.yaml");
  ASSERT_TRUE(r.ok()) << r.errors[0].to_string();
  const PfcConfig& p = r.config.switches[0].pfc;
  EXPECT_EQ(p.mode, PfcGenerationMode::kPfc);
  EXPECT_EQ(p.xoff_bytes, 65536u);
  EXPECT_EQ(p.hysteresis_bytes, 4000u);
  EXPECT_EQ(p.quanta, 1000);
  EXPECT_EQ(p.priorities, 0b1001);
  EXPECT_FALSE(r.config.switches[0].ports[0].pfc.enabled);
}

TEST(PfcConfig, DynamicThresholdTakesAlpha) {
  const ConfigResult r = load_config_string(
      with_pfc("    pfc:\n      mode: pause\n      xoff: dynamic\n      alpha: 0.25\n"), "t.yaml");
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(r.config.switches[0].pfc.mode, PfcGenerationMode::kPause);
  EXPECT_TRUE(r.config.switches[0].pfc.dynamic);
  EXPECT_DOUBLE_EQ(r.config.switches[0].pfc.alpha, 0.25);
}

TEST(PfcConfig, MistakesNameTheirLineAndKey) {
  const auto e = errors_of(with_pfc("    pfc:\n"
                                    "      mode: lossless\n"
                                    "      xoff: 10 furlongs\n"
                                    "      alpha: 0.5\n"
                                    "      quanta: 70000\n"
                                    "      priorities: [8]\n"
                                    "      pause: yes\n"));
  const std::vector<std::string> expected = {
      "t.yaml:4: switches[0].pfc.mode: expected one of off, pfc, pause, got \"lossless\"",
      "t.yaml:5: switches[0].pfc.xoff: expected a size such as 100KB, 12MiB or 1500B, got "
      "\"10 furlongs\"",
      "t.yaml:6: switches[0].pfc.alpha: \"alpha\" applies only to xoff: dynamic",
      "t.yaml:7: switches[0].pfc.quanta: expected an integer between 1 and 65535, got \"70000\"",
      "t.yaml:8: switches[0].pfc.priorities[0]: expected an integer between 0 and 7, got \"8\"",
      "t.yaml:9: switches[0].pfc.pause: unknown key \"pause\"; allowed keys: mode, xoff, alpha, "
      "hysteresis, reserve, headroom, quanta, priorities"};
  EXPECT_EQ(e, expected);
}

TEST(PfcConfig, PrioritiesAreRefusedWithPause) {
  EXPECT_EQ(errors_of(with_pfc("    pfc:\n"
                               "      mode: pause\n"
                               "      priorities: [3]\n")),
            (std::vector<std::string>{
                "t.yaml:5: switches[0].pfc.priorities: priorities apply to mode pfc: PAUSE "
                "(802.3x) stops the whole port",
            }));
}

TEST(PfcConfig, ALosslessPriorityMustCarryData) {
  EXPECT_EQ(errors_of(with_pfc("    pfc:\n"
                               "      mode: pfc\n"
                               "      priorities: [3]\n")),
            (std::vector<std::string>{
                "t.yaml:5: switches[0].pfc.priorities: no listed priority carries data: "
                "class_map fifo puts every packet in priority 0, so nothing would be paused",
            }));
  EXPECT_EQ(errors_of(with_pfc("    queues_per_port: 4\n"
                               "    class_map: dscp\n"
                               "    pfc:\n"
                               "      mode: pfc\n"
                               "      priorities: [1, 7]\n")),
            (std::vector<std::string>{
                "t.yaml:7: switches[0].pfc.priorities: no listed priority carries data: with 4 "
                "queues class_map dscp uses only priorities 0, 2, 4, 6, so nothing would be "
                "paused",
            }));
  EXPECT_TRUE(errors_of(with_pfc("    class_map: dscp\n"
                                 "    pfc:\n"
                                 "      mode: pfc\n"
                                 "      priorities: [3]\n"))
                  .empty());
  EXPECT_TRUE(errors_of(with_pfc("    pfc: {mode: pfc, priorities: [0]}\n")).empty());
  // A malformed list is reported as such, not also as carrying no data.
  EXPECT_EQ(errors_of(with_pfc("    pfc: {mode: pfc, priorities: [3, 9]}\n")).size(), 1u);
}

TEST(PfcConfig, APortSetsItsOwnThresholds) {
  const ConfigResult r = load_config_string(
      with_pfc("    pfc: {mode: pfc, xoff: dynamic, alpha: 0.25, reserve: 4KiB}\n",
               "        pfc: {alpha: 1, headroom: 240000B, hysteresis: 3KiB}\n"),
      "t.yaml");
  ASSERT_TRUE(r.ok()) << r.errors[0].to_string();
  const SwitchConfig& sw = r.config.switches[0];
  EXPECT_EQ(sw.pfc.reserve_bytes, 4096u);
  EXPECT_EQ(sw.pfc.headroom_bytes, 0u);
  const PortPfcConfig& pp = sw.ports[0].pfc;
  EXPECT_TRUE(pp.enabled);
  const PfcConfig c = port_pfc(sw.pfc, pp);
  EXPECT_TRUE(c.dynamic);
  EXPECT_DOUBLE_EQ(c.alpha, 1.0);
  EXPECT_EQ(c.headroom_bytes, 240'000u);
  EXPECT_EQ(c.hysteresis_bytes, 3'072u);
  EXPECT_EQ(c.reserve_bytes, 4'096u);  // the switch's
  // A static threshold of its own replaces the switch's dynamic one.
  const ConfigResult s = load_config_string(
      with_pfc("    pfc: {mode: pfc, xoff: dynamic}\n", "        pfc: {xoff: 50KB}\n"), "t.yaml");
  ASSERT_TRUE(s.ok());
  const PfcConfig st = port_pfc(s.config.switches[0].pfc, s.config.switches[0].ports[0].pfc);
  EXPECT_FALSE(st.dynamic);
  EXPECT_EQ(st.xoff_bytes, 50'000u);
}

TEST(PfcConfig, APortsOwnSettingsAreChecked) {
  EXPECT_EQ(errors_of(with_pfc("", "        pfc: {alpha: 0.5}\n")),
            (std::vector<std::string>{
                "t.yaml:8: switches[0].ports[0].pfc: a port's own PFC settings need its "
                "switch's pfc: mode pfc or pause",
            }));
  EXPECT_EQ(errors_of(with_pfc("    pfc: {mode: pfc}\n", "        pfc: {alpha: 0.5}\n")),
            (std::vector<std::string>{
                "t.yaml:9: switches[0].ports[0].pfc.alpha: \"alpha\" applies only to a dynamic "
                "threshold (xoff: dynamic, here or in the switch's pfc)",
            }));
  EXPECT_EQ(errors_of(with_pfc("    pfc: {mode: pause}\n", "        pfc: {headroom: 10KB}\n")),
            (std::vector<std::string>{
                "t.yaml:9: switches[0].ports[0].pfc.headroom: headroom is counted per priority: "
                "it needs mode pfc, not pause",
            }));
  EXPECT_EQ(errors_of(with_pfc("    buffer: {size: 100KB}\n    pfc: {mode: pfc, reserve: 40KB}\n",
                               "        pfc: {headroom: 60KB}\n")),
            (std::vector<std::string>{
                "t.yaml:4: switches[0].pfc: the ports' PFC headroom and reserve set aside "
                "100000 bytes, the whole buffer (100000 bytes): nothing is left to share",
            }));
  EXPECT_EQ(errors_of(with_pfc("    pfc: {mode: pfc}\n", "        pfc: {reserve: -1, speed: 3}\n"))
                .size(),
            2u);
}

}  // namespace
}  // namespace sluice
