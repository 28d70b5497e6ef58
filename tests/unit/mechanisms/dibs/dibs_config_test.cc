// The dibs: section of a switch: defaults, every key, located errors for
// bad values, and the combinations --check refuses (DIBS is for lossy
// fabrics and needs a switch-facing port to detour to).
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "lib/config/config_loader.h"
#include "tests/unit/config/config_errors.h"

namespace sluice {
namespace {

std::string with_dibs(const std::string& switch_extra, const std::string& uplink_role = "switch") {
  return "switches:\n"
         "  - name: s1\n" +
         switch_extra +
         "    ports:\n"
         "      - {name: p0, device: net_null0, role: host, rate: 10Gbps}\n"
         "      - {name: p1, device: net_null1, role: " +
         uplink_role + ", rate: 10Gbps}\n";
}

std::vector<std::string> errors_of(const std::string& yaml) {
  return error_strings(load_config_string(yaml, "t.yaml"));
}

TEST(DibsConfig, OffWithoutTheSectionWithTheDocumentedDefaults) {
  const ConfigResult r = load_config_string(with_dibs(""), "t.yaml");
  ASSERT_TRUE(r.ok());
  const DibsConfig& d = r.config.switches[0].dibs;
  EXPECT_FALSE(d.enabled);
  EXPECT_EQ(d.policy, DibsPolicy::kRandom);
  EXPECT_EQ(d.max_detours, 0u);
}

TEST(DibsConfig, TheSectionTurnsItOnWithTheDefaults) {
  const ConfigResult r = load_config_string(with_dibs("    dibs: {}\n"), "t.yaml");
  ASSERT_TRUE(r.ok()) << r.errors[0].to_string();
  const DibsConfig& d = r.config.switches[0].dibs;
  EXPECT_TRUE(d.enabled);
  EXPECT_EQ(d.policy, DibsPolicy::kRandom);
  EXPECT_EQ(d.max_detours, 0u);
}

TEST(DibsConfig, EveryKeyIsRead) {
  const ConfigResult r = load_config_string(with_dibs("    dibs:\n"
                                                      "      enabled: true\n"
                                                      "      policy: load_aware\n"
                                                      "      max_detours: 255\n"),
                                            "t.yaml");
  ASSERT_TRUE(r.ok()) << r.errors[0].to_string();
  const DibsConfig& d = r.config.switches[0].dibs;
  EXPECT_TRUE(d.enabled);
  EXPECT_EQ(d.policy, DibsPolicy::kLoadAware);
  EXPECT_EQ(d.max_detours, 255u);
}

TEST(DibsConfig, EnabledFalseIsAcceptedAndKeepsTheOtherKeys) {
  const ConfigResult r = load_config_string(
      with_dibs("    dibs: {enabled: false, policy: load_aware, max_detours: 4}\n"), "t.yaml");
  ASSERT_TRUE(r.ok()) << r.errors[0].to_string();
  const DibsConfig& d = r.config.switches[0].dibs;
  EXPECT_FALSE(d.enabled);
  EXPECT_EQ(d.policy, DibsPolicy::kLoadAware);
  EXPECT_EQ(d.max_detours, 4u);
}

TEST(DibsConfig, BadValuesAreReportedWithTheirLineAndKey) {
  EXPECT_EQ(errors_of(with_dibs("    dibs:\n"
                                "      enabled: yes please\n"
                                "      policy: nearest\n"
                                "      max_detours: 256\n"
                                "      ttl: 12\n")),
            (std::vector<std::string>{
                "t.yaml:4: switches[0].dibs.enabled: expected true or false, got \"yes please\"",
                "t.yaml:5: switches[0].dibs.policy: expected one of random, load_aware, got "
                "\"nearest\"",
                "t.yaml:6: switches[0].dibs.max_detours: expected an integer between 0 and 255, "
                "got \"256\"",
                "t.yaml:7: switches[0].dibs.ttl: unknown key \"ttl\"; allowed keys: enabled, "
                "policy, max_detours",
            }));
  EXPECT_EQ(errors_of(with_dibs("    dibs: {max_detours: -1}\n")),
            (std::vector<std::string>{
                "t.yaml:3: switches[0].dibs.max_detours: expected an integer between 0 and 255, "
                "got \"-1\"",
            }));
  EXPECT_EQ(errors_of(with_dibs("    dibs: random\n")),
            (std::vector<std::string>{
                "t.yaml:3: switches[0].dibs: expected a map, got \"random\"",
            }));
}

TEST(DibsConfig, RefusedWithPfcOrPauseBecauseNothingWouldBeDropped) {
  EXPECT_EQ(errors_of(with_dibs("    dibs: {}\n"
                                "    pfc: {mode: pfc}\n")),
            (std::vector<std::string>{
                "t.yaml:3: switches[0].dibs: dibs is for lossy fabrics: with pfc mode pfc the "
                "switch pauses its upstream instead of dropping, so there would be no drop to "
                "detour",
            }));
  EXPECT_EQ(errors_of(with_dibs("    dibs: {}\n"
                                "    pfc: {mode: pause}\n")),
            (std::vector<std::string>{
                "t.yaml:3: switches[0].dibs: dibs is for lossy fabrics: with pfc mode pause the "
                "switch pauses its upstream instead of dropping, so there would be no drop to "
                "detour",
            }));
  // A pfc section that leaves it off is no conflict.
  EXPECT_EQ(errors_of(with_dibs("    dibs: {}\n"
                                "    pfc: {mode: off}\n")),
            std::vector<std::string>{});
}

TEST(DibsConfig, RefusedWithBfc) {
  EXPECT_EQ(errors_of(with_dibs("    dibs: {}\n"
                                "    bfc: {}\n")),
            (std::vector<std::string>{
                "t.yaml:3: switches[0].dibs: dibs is for lossy fabrics: bfc pauses flows hop by "
                "hop instead of dropping, so there would be no drop to detour",
            }));
}

TEST(DibsConfig, RefusedWithFloodgate) {
  EXPECT_EQ(errors_of(with_dibs("    dibs: {}\n"
                                "    floodgate: {}\n")),
            (std::vector<std::string>{
                "t.yaml:3: switches[0].dibs: dibs and floodgate on one switch are not supported: "
                "a detoured packet is debited from its destination's window here and credited "
                "by the neighbour it was detoured to, off its path, so the window would no "
                "longer bound the bytes in flight toward that destination",
            }));
}

TEST(DibsConfig, RefusedWithoutASwitchFacingPort) {
  EXPECT_EQ(errors_of(with_dibs("    dibs: {}\n", "host")),
            (std::vector<std::string>{
                "t.yaml:3: switches[0].dibs: dibs detours only to switch-facing ports, and "
                "switch \"s1\" has none (role: switch)",
            }));
}

// Refusals apply to DIBS that is on; a section that turns it off, or a
// DIBS switch next to a PFC switch, is fine.
TEST(DibsConfig, OffOrOnAnotherSwitchIsNoConflict) {
  EXPECT_EQ(errors_of(with_dibs("    dibs: {enabled: false}\n"
                                "    bfc: {}\n"
                                "    pfc: {mode: pfc}\n",
                                "host")),
            std::vector<std::string>{});
  const std::string two =
      "switches:\n"
      "  - name: s1\n"
      "    dibs: {policy: load_aware}\n"
      "    ports:\n"
      "      - {name: h0, device: net_null0, role: host, rate: 10Gbps}\n"
      "      - {name: u0, link: s2/d0, role: switch, rate: 10Gbps}\n"
      "  - name: s2\n"
      "    pfc: {mode: pfc}\n"
      "    ports:\n"
      "      - {name: d0, link: s1/u0, role: switch, rate: 10Gbps}\n"
      "      - {name: h1, device: net_null1, role: host, rate: 10Gbps}\n";
  EXPECT_EQ(errors_of(two), std::vector<std::string>{});
}

// TCD needs no pause source, so it may share a lossy DIBS switch (it is
// then step marking at dequeue, and says so in a note of its own).
TEST(DibsConfig, TcdIsAccepted) {
  const ConfigResult r = load_config_string(with_dibs("    dibs: {}\n"
                                                      "    tcd: {q_th: 30KB}\n"),
                                            "t.yaml");
  EXPECT_TRUE(r.ok()) << r.errors[0].to_string();
  EXPECT_TRUE(r.config.switches[0].dibs.enabled);
  EXPECT_TRUE(r.config.switches[0].tcd.enabled);
  ASSERT_EQ(r.notes.size(), 1u);
  EXPECT_EQ(r.notes[0].key, "switches[0].tcd");
}

// Every refusal that applies is reported, each at the dibs key.
TEST(DibsConfig, EveryRefusalIsReported) {
  const std::vector<std::string> errors =
      errors_of(with_dibs("    dibs: {}\n"
                          "    floodgate: {}\n"
                          "    pfc: {mode: pfc}\n",
                          "host"));
  ASSERT_EQ(errors.size(), 3u);
  for (const std::string& e : errors) EXPECT_EQ(e.rfind("t.yaml:3: switches[0].dibs: ", 0), 0u);
}

}  // namespace
}  // namespace sluice
