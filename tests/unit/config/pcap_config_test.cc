// Keys of capture-file ports that the error tests in config_errors_test.cc
// do not already cover.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "lib/config/config_loader.h"

namespace sluice {
namespace {

TEST(PcapSnaplen, ReadForWrittenCapturesOnly) {
  const std::string yaml = R"(switches:
  - name: s1
    ports:
      - name: p0
        role: host
        rate: 0
        pcap: {tx: out.pcap, snaplen: 128}
      - name: p1
        role: host
        rate: 0
        pcap: {rx: in.pcap, snaplen: 128}
      - name: p2
        role: host
        rate: 0
        pcap: {tx: out2.pcap, snaplen: 10}
)";
  const ConfigResult r = load_config_string(yaml, "t.yaml");
  EXPECT_EQ(r.config.switches[0].ports[0].pcap->snaplen, 128u);
  std::vector<std::string> e;
  for (const ConfigError& x : r.errors) e.push_back(x.to_string());
  EXPECT_EQ(e, (std::vector<std::string>{
                   "t.yaml:11: switches[0].ports[1].pcap.snaplen: \"snaplen\" applies only to "
                   "a written capture (tx)",
                   "t.yaml:15: switches[0].ports[2].pcap.snaplen: expected an integer between "
                   "64 and 65535, got \"10\""}));
  const ConfigResult d = load_config_string(
      "switches:\n  - name: s1\n    ports:\n      - {name: p0, role: host, rate: 0, pcap: {tx: "
      "o.pcap}}\n",
      "t.yaml");
  ASSERT_TRUE(d.ok());
  EXPECT_EQ(d.config.switches[0].ports[0].pcap->snaplen, 65535u);
}

}  // namespace
}  // namespace sluice
