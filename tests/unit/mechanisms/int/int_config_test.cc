// A switch's int: section (lib/mechanisms/int/int_config.cc): whether its
// egress ports stamp HPCC's in-band telemetry.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "lib/config/config_loader.h"
#include "tests/unit/config/config_errors.h"

namespace sluice {
namespace {

std::string with_int(const std::string& int_line) {
  return "switches:\n"
         "  - name: s1\n" +
         int_line +
         "    ports:\n"
         "      - {name: p0, device: net_null0, role: host, rate: 10Gbps}\n";
}

bool stamps(const std::string& int_line) {
  const ConfigResult r = load_config_string(with_int(int_line), "t.yaml");
  EXPECT_TRUE(r.ok()) << (r.errors.empty() ? "" : r.errors[0].to_string());
  return r.config.switches.at(0).int_telemetry;
}

TEST(IntConfig, OffUnlessTheSectionIsGiven) {
  EXPECT_FALSE(stamps(""));
  EXPECT_TRUE(stamps("    int: {}\n"));
  EXPECT_TRUE(stamps("    int: {enabled: true}\n"));
  EXPECT_FALSE(stamps("    int: {enabled: false}\n"));
}

TEST(IntConfig, Errors) {
  const auto errors_of = [](const std::string& int_line) {
    return error_strings(load_config_string(with_int(int_line), "t.yaml"));
  };
  EXPECT_EQ(errors_of("    int: true\n"),
            std::vector<std::string>{"t.yaml:3: switches[0].int: expected a map, got \"true\""});
  EXPECT_EQ(errors_of("    int: {enabld: true}\n"),
            std::vector<std::string>{"t.yaml:3: switches[0].int.enabld: unknown key \"enabld\"; "
                                     "did you mean \"enabled\"?"});
  EXPECT_EQ(errors_of("    int: {foo: 1}\n"),
            std::vector<std::string>{
                "t.yaml:3: switches[0].int.foo: unknown key \"foo\"; allowed keys: enabled"});
  EXPECT_EQ(errors_of("    int: {enabled: maybe}\n"),
            std::vector<std::string>{
                "t.yaml:3: switches[0].int.enabled: expected true or false, got \"maybe\""});
}

}  // namespace
}  // namespace sluice
