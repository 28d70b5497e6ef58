// The tcd: section of a switch: defaults, every key, located errors for bad
// values, and the checks and notes that tie it to ECN, PFC and BFC.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "lib/config/config_loader.h"
#include "tests/unit/config/config_errors.h"

namespace sluice {
namespace {

std::string with_tcd(const std::string& switch_extra) {
  return "switches:\n"
         "  - name: s1\n" +
         switch_extra +
         "    ports:\n"
         "      - {name: p0, device: net_null0, role: host, rate: 10Gbps}\n"
         "      - {name: p1, device: net_null1, role: switch, rate: 10Gbps}\n";
}

std::vector<std::string> errors_of(const std::string& yaml) {
  return error_strings(load_config_string(yaml, "t.yaml"));
}

std::vector<std::string> notes_of(const std::string& yaml) {
  const ConfigResult r = load_config_string(yaml, "t.yaml");
  std::vector<std::string> out;
  for (const ConfigError& e : r.notes) out.push_back(e.to_string());
  return out;
}

TEST(TcdConfig, OffWithoutTheSectionWithTheDocumentedDefaults) {
  const ConfigResult r = load_config_string(with_tcd(""), "t.yaml");
  ASSERT_TRUE(r.ok());
  const TcdConfig& t = r.config.switches[0].tcd;
  EXPECT_FALSE(t.enabled);
  EXPECT_EQ(t.q_th_bytes, 0u);
  EXPECT_EQ(t.max_t_on_ns, 0u);
  EXPECT_EQ(t.ce_codepoint, 3u);
  EXPECT_EQ(t.ue_codepoint, 1u);
  EXPECT_FALSE(t.queue_falling);
  EXPECT_EQ(t.falling_interval_ns, 0u);
  EXPECT_TRUE(r.notes.empty());
}

TEST(TcdConfig, EveryKeyIsReadAndTheSectionTurnsItOn) {
  const ConfigResult r = load_config_string(with_tcd("    pfc: {mode: pfc}\n"
                                                     "    tcd:\n"
                                                     "      q_th: 30KB\n"
                                                     "      max_t_on: 50us\n"
                                                     "      ce_codepoint: 2\n"
                                                     "      ue_codepoint: 3\n"
                                                     "      queue_falling: true\n"
                                                     "      falling_interval: 4us\n"),
                                            "t.yaml");
  ASSERT_TRUE(r.ok()) << r.errors[0].to_string();
  const TcdConfig& t = r.config.switches[0].tcd;
  EXPECT_TRUE(t.enabled);
  EXPECT_EQ(t.q_th_bytes, 30'000u);
  EXPECT_EQ(t.max_t_on_ns, 50'000u);
  EXPECT_EQ(t.ce_codepoint, 2u);
  EXPECT_EQ(t.ue_codepoint, 3u);
  EXPECT_TRUE(t.queue_falling);
  EXPECT_EQ(t.falling_interval_ns, 4'000u);
  EXPECT_TRUE(r.notes.empty());
}

TEST(TcdConfig, QthDefaultsToTheEcnStepThreshold) {
  const ConfigResult r = load_config_string(with_tcd("    ecn: {mode: step, k: 40KB}\n"
                                                     "    pfc: {mode: pfc}\n"
                                                     "    tcd: {}\n"),
                                            "t.yaml");
  ASSERT_TRUE(r.ok()) << r.errors[0].to_string();
  EXPECT_TRUE(r.config.switches[0].tcd.enabled);
  EXPECT_EQ(r.config.switches[0].tcd.q_th_bytes, 0u);  // resolved by lib/mechanisms/tcd/tcd_params.h
  EXPECT_EQ(r.config.switches[0].tm.ecn.step_k_bytes, 40'000u);
}

TEST(TcdConfig, EnabledFalseIsAcceptedAndKeepsTheOtherKeys) {
  const ConfigResult r =
      load_config_string(with_tcd("    tcd: {enabled: false, q_th: 7KB}\n"), "t.yaml");
  ASSERT_TRUE(r.ok()) << r.errors[0].to_string();
  EXPECT_FALSE(r.config.switches[0].tcd.enabled);
  EXPECT_EQ(r.config.switches[0].tcd.q_th_bytes, 7'000u);
}

TEST(TcdConfig, BadValuesAreReportedWithTheirKey) {
  EXPECT_EQ(errors_of(with_tcd("    tcd:\n"
                               "      q_th: 0\n"
                               "      max_t_on: 20KB\n"
                               "      ce_codepoint: 0\n"
                               "      ue_codepoint: 4\n"
                               "      queue_falling: sometimes\n"
                               "      falling_interval: 0\n"
                               "      k: 10\n")),
            (std::vector<std::string>{
                "t.yaml:4: switches[0].tcd.q_th: expected a value at least 1B, got \"0\"",
                "t.yaml:5: switches[0].tcd.max_t_on: expected a duration such as 10us, 500ns or "
                "1ms, got \"20KB\"",
                "t.yaml:6: switches[0].tcd.ce_codepoint: expected an integer between 1 and 3, "
                "got \"0\"",
                "t.yaml:7: switches[0].tcd.ue_codepoint: expected an integer between 1 and 3, "
                "got \"4\"",
                "t.yaml:8: switches[0].tcd.queue_falling: expected true or false, got "
                "\"sometimes\"",
                "t.yaml:9: switches[0].tcd.falling_interval: expected a value between 1ns and 1s, "
                "got \"0\"",
                "t.yaml:10: switches[0].tcd.k: unknown key \"k\"; allowed keys: enabled, q_th, "
                "max_t_on, ce_codepoint, ue_codepoint, queue_falling, falling_interval",
            }));
}

TEST(TcdConfig, CodepointsMustDiffer) {
  EXPECT_EQ(errors_of(with_tcd("    tcd: {q_th: 10KB, ue_codepoint: 3}\n")),
            (std::vector<std::string>{
                "t.yaml:3: switches[0].tcd.ue_codepoint: expected ce_codepoint and ue_codepoint "
                "to differ, both are 3",
            }));
  EXPECT_EQ(errors_of(with_tcd("    tcd:\n"
                               "      q_th: 10KB\n"
                               "      ce_codepoint: 1\n")),
            (std::vector<std::string>{
                "t.yaml:5: switches[0].tcd.ce_codepoint: expected ce_codepoint and ue_codepoint "
                "to differ, both are 1",
            }));
  // Swapped is allowed: the user says what each codepoint means.
  EXPECT_EQ(errors_of(with_tcd("    tcd: {q_th: 10KB, ce_codepoint: 1, ue_codepoint: 3}\n")),
            std::vector<std::string>{});
}

TEST(TcdConfig, RefusedWithoutAQthOrWithRedMarking) {
  EXPECT_EQ(errors_of(with_tcd("    tcd: {}\n")),
            (std::vector<std::string>{
                "t.yaml:3: switches[0].tcd: tcd needs q_th: its default is the ECN step "
                "threshold, and ecn gives no k (set tcd.q_th, or ecn: {mode: step, k: ...})",
            }));
  // ecn off with a k written still gives the default.
  EXPECT_EQ(errors_of(with_tcd("    ecn: {mode: off, k: 20KB}\n"
                               "    tcd: {}\n")),
            std::vector<std::string>{});
  EXPECT_EQ(errors_of(with_tcd("    ecn: {mode: red, min: 10KB, max: 50KB, pmax: 0.1}\n"
                               "    tcd: {q_th: 10KB}\n")),
            (std::vector<std::string>{
                "t.yaml:4: switches[0].tcd: tcd replaces ECN marking at enqueue on its switch, "
                "so ecn mode red would never mark: use ecn mode step (its k is tcd's default "
                "q_th) or off with tcd.q_th",
            }));
  // Off, it does not care.
  EXPECT_EQ(errors_of(with_tcd("    ecn: {mode: red, min: 10KB, max: 50KB, pmax: 0.1}\n"
                               "    tcd: {enabled: false}\n")),
            std::vector<std::string>{});
}

// TCD with nothing to pause it is allowed (DCTCP step marking at dequeue);
// the check says so once per switch.
TEST(TcdConfig, WithoutPfcOrBfcItIsAcceptedWithANote) {
  const std::string yaml = with_tcd("    tcd: {q_th: 10KB}\n");
  EXPECT_EQ(errors_of(yaml), std::vector<std::string>{});
  EXPECT_EQ(notes_of(yaml),
            (std::vector<std::string>{
                "t.yaml:3: switches[0].tcd: tcd without pfc or bfc: nothing pauses this "
                "switch's ports, so TCD marks CE like DCTCP step marking at q_th (at dequeue) and "
                "never marks UE",
            }));
  EXPECT_EQ(notes_of(with_tcd("    pfc: {mode: pause}\n"
                              "    tcd: {q_th: 10KB}\n")),
            std::vector<std::string>{});
  EXPECT_EQ(notes_of(with_tcd("    bfc: {}\n"
                              "    tcd: {q_th: 10KB}\n")),
            std::vector<std::string>{});
  // A Floodgate window is not a pause.
  const std::vector<std::string> fg =
      notes_of(with_tcd("    floodgate: {}\n"
                        "    tcd: {q_th: 10KB}\n"));
  ASSERT_EQ(fg.size(), 1u);
  EXPECT_NE(fg[0].find("tcd without pfc or bfc"), std::string::npos);
}

}  // namespace
}  // namespace sluice
