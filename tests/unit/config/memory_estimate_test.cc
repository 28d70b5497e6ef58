// What a configuration needs of DPDK memory (lib/config/memory_estimate.h).
#include "lib/config/memory_estimate.h"

#include <gtest/gtest.h>

#include "lib/config/config_loader.h"

namespace sluice {
namespace {

Config fabric(int switches, uint32_t mbufs, const char* link_rate = "10Gbps") {
  std::string yaml = "mbufs: " + std::to_string(mbufs) + "\nswitches:\n";
  for (int i = 0; i < switches; ++i) {
    const std::string me = "s" + std::to_string(i);
    const std::string next = "s" + std::to_string((i + 1) % switches);
    const std::string prev = "s" + std::to_string((i + switches - 1) % switches);
    yaml += "  - name: " + me + "\n    ports:\n";
    yaml += "      - {name: a, role: switch, rate: " + std::string(link_rate) + ", link: " + next +
            "/b}\n";
    yaml += "      - {name: b, role: switch, rate: " + std::string(link_rate) + ", link: " + prev +
            "/a}\n";
  }
  const ConfigResult r = load_config_string(yaml, "t.yaml");
  EXPECT_TRUE(r.ok());
  return r.config;
}

TEST(MemoryEstimate, PartsScaleWithWhatTheConfigurationHas) {
  const MemoryEstimate three = estimate_dpdk_memory(fabric(3, 10000));
  const MemoryEstimate six = estimate_dpdk_memory(fabric(6, 10000));
  // A routing table per switch, whatever its routes: 2^24 entries of 4 bytes.
  EXPECT_GE(three.routing, 3 * (uint64_t{64} << 20));
  EXPECT_EQ(six.routing, 2 * three.routing);
  EXPECT_EQ(six.mbuf_pool, three.mbuf_pool);
  EXPECT_GT(six.rings, three.rings);  // twice the links
  const MemoryEstimate more_mbufs = estimate_dpdk_memory(fabric(3, 20000));
  EXPECT_EQ(more_mbufs.mbuf_pool, 2 * three.mbuf_pool);
  // Each mbuf: its 2 KiB room and its headers, a 4 KiB page without
  // hugepages.
  EXPECT_EQ(three.mbuf_pool, uint64_t{10000} * 4096);
  // Faster links need longer rings.
  EXPECT_GT(estimate_dpdk_memory(fabric(3, 10000, "400Gbps")).rings, three.rings);
  EXPECT_EQ(three.total(), three.mbuf_pool + three.routing + three.rings + three.eal);
  EXPECT_NE(three.parts().find("3 switches x 64 MiB"), std::string::npos) << three.parts();
}

}  // namespace
}  // namespace sluice
