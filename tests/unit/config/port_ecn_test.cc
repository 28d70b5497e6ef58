// A port's own ecn: section, replacing its switch's (the public simulators
// mark by link rate); tcd_params_test.cc checks what the port then marks by.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "lib/config/config_loader.h"
#include "tests/unit/config/config_errors.h"

namespace sluice {
namespace {

std::string with_ecn(const std::string& switch_extra, const std::string& port_extra) {
  return "switches:\n"
         "  - name: s1\n" +
         switch_extra +
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

TEST(PortEcn, ReplacesTheSwitchsAndIsRefusedUnderTcd) {
  const ConfigResult r = load_config_string(
      with_ecn("    ecn: {mode: red, min: 400KB, max: 1600KB, pmax: 0.2}\n",
               "        ecn: {mode: red, min: 1600KB, max: 6400KB, pmax: 0.2}\n"),
      "t.yaml");
  ASSERT_TRUE(r.ok()) << r.errors[0].to_string();
  const PortConfig& p = r.config.switches[0].ports[0];
  ASSERT_TRUE(p.ecn.has_value());
  EXPECT_EQ(p.ecn->red_min_bytes, 1'600'000u);
  EXPECT_EQ(r.config.switches[0].tm.ecn.red_min_bytes, 400'000u);
  EXPECT_EQ(errors_of(with_ecn("    ecn: {mode: step, k: 30KB}\n    tcd: {}\n",
                               "        ecn: {mode: step, k: 60KB}\n")),
            (std::vector<std::string>{
                "t.yaml:10: switches[0].ports[0].ecn: a port's own ecn is refused on a tcd "
                "switch: TCD marks at dequeue by the switch's ecn step threshold (or tcd.q_th)",
            }));
}

}  // namespace
}  // namespace sluice
