// What a configuration needs of DPDK memory (lib/config/memory_estimate.h).
#include "lib/config/memory_estimate.h"

#include <gtest/gtest.h>

#include "lib/config/config_loader.h"

namespace sluice {
namespace {

// A ring of `switches` switches, each linked to the next and the previous.
// (Appended piece by piece: GCC 12 warns falsely, -Wrestrict, on
// "literal" + std::string at -O3.)
Config fabric(int switches, uint32_t mbufs, const char* link_rate = "10Gbps") {
  std::string yaml = "mbufs: ";
  yaml.append(std::to_string(mbufs)).append("\nswitches:\n");
  for (int i = 0; i < switches; ++i) {
    const std::string me = std::to_string(i);
    const std::string next = std::to_string((i + 1) % switches);
    const std::string prev = std::to_string((i + switches - 1) % switches);
    yaml.append("  - name: s").append(me).append("\n    ports:\n");
    yaml.append("      - {name: a, role: switch, rate: ").append(link_rate);
    yaml.append(", link: s").append(next).append("/b}\n");
    yaml.append("      - {name: b, role: switch, rate: ").append(link_rate);
    yaml.append(", link: s").append(prev).append("/a}\n");
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
  // The links' rings are process memory: not DPDK's, whatever the links.
  EXPECT_EQ(six.rings, three.rings);
  const MemoryEstimate more_mbufs = estimate_dpdk_memory(fabric(3, 20000));
  EXPECT_EQ(more_mbufs.mbuf_pool, 2 * three.mbuf_pool);
  // Each mbuf: its 2 KiB room and its headers, a 4 KiB page without
  // hugepages.
  EXPECT_EQ(three.mbuf_pool, uint64_t{10000} * 4096);
  EXPECT_EQ(estimate_dpdk_memory(fabric(3, 10000, "400Gbps")).rings, three.rings);
  EXPECT_EQ(three.total(), three.mbuf_pool + three.routing + three.rings + three.eal);
  EXPECT_NE(three.parts().find("3 switches x 64 MiB"), std::string::npos) << three.parts();
}

// In fabric time the switches route in process memory and the frames are in
// process memory as the fabric holds them: EAL keeps only each possible
// pool's ring and caches (1.5 MiB per 16,384 mbufs).
TEST(MemoryEstimate, FabricTimeKeepsFramesAndRoutesOutOfEal) {
  Config c = fabric(3, 40000);
  c.clock.mode = ClockMode::kExact;
  const MemoryEstimate e = estimate_dpdk_memory(c);
  EXPECT_EQ(e.routing, 0u);
  EXPECT_TRUE(e.frames_in_process);
  EXPECT_EQ(e.mbuf_pool, 3 * (uint64_t{3} << 19));  // 40,000 mbufs: three pools
  EXPECT_NE(e.parts().find("routing tables in process memory"), std::string::npos) << e.parts();
  EXPECT_NE(e.parts().find("frames in process memory"), std::string::npos) << e.parts();
  EXPECT_EQ(e.total(), e.mbuf_pool + e.rings + e.eal);
}

}  // namespace
}  // namespace sluice
