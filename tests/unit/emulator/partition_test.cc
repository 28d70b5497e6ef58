// The emulator's partition of switches over worker lcores: whole switches,
// balanced by ports, Flowtune's edges together, and the lookahead of the
// links that cross.
#include "lib/emulator/partition.h"

#include <gtest/gtest.h>

namespace sluice {
namespace {

// A line of `n` switches s0..s(n-1), each with `hosts` host ports, joined by
// links of `delay_ns` at 100 Gb/s.
Config line(unsigned n, unsigned hosts, uint64_t delay_ns) {
  Config c;
  c.clock.mode = ClockMode::kExact;
  for (unsigned i = 0; i < n; ++i) {
    SwitchConfig sw;
    sw.name = "s" + std::to_string(i);
    for (unsigned h = 0; h < hosts; ++h) {
      PortConfig p;
      p.name = "h" + std::to_string(h);
      p.rate_bps = 100'000'000'000;
      sw.ports.push_back(p);
    }
    for (int side : {-1, 1}) {
      const int peer = static_cast<int>(i) + side;
      if (peer < 0 || peer >= static_cast<int>(n)) continue;
      PortConfig p;
      p.name = side < 0 ? "left" : "right";
      p.role = PortRole::kSwitch;
      p.rate_bps = 100'000'000'000;
      p.link_delay_ns = delay_ns;
      p.link_peer = "s" + std::to_string(peer) + "/" + (side < 0 ? "right" : "left");
      sw.ports.push_back(p);
    }
    c.switches.push_back(sw);
  }
  return c;
}

TEST(EmulatorPartition, WholeSwitchesInBalancedRuns) {
  const Config c = line(4, 3, 1000);
  const std::vector<unsigned> slots = emulator_partition(c, 2);
  ASSERT_EQ(slots.size(), 4u * 3 + 6);
  // s0 and s1 on one lcore, s2 and s3 on the other.
  size_t i = 0;
  for (unsigned s = 0; s < 4; ++s) {
    for (size_t p = 0; p < c.switches[s].ports.size(); ++p, ++i)
      EXPECT_EQ(slots[i], s < 2 ? 0u : 1u) << "switch " << s;
  }
  const PartitionCheck r = check_partition(c, slots);
  EXPECT_TRUE(r.error.empty()) << r.error;
  EXPECT_EQ(r.cross_links, 2u);  // s1 -> s2 and s2 -> s1
  // 1 us of delay plus the wire overhead alone (24 bytes) at 100 Gb/s.
  EXPECT_EQ(r.lookahead_ns, 1000u + 1u);
}

TEST(EmulatorPartition, OneWorkerHasNoCrossLinks) {
  const Config c = line(3, 2, 1000);
  const PartitionCheck r = check_partition(c, emulator_partition(c, 1));
  EXPECT_TRUE(r.error.empty());
  EXPECT_EQ(r.cross_links, 0u);
  EXPECT_EQ(r.lookahead_ns, UINT64_MAX);
}

TEST(EmulatorPartition, ASplitSwitchIsRefused) {
  const Config c = line(2, 2, 1000);
  std::vector<unsigned> slots = emulator_partition(c, 2);
  slots[0] = 1;  // s0's first host port on the other lcore
  const PartitionCheck r = check_partition(c, slots);
  EXPECT_NE(r.error.find("switch s0 is split"), std::string::npos) << r.error;
}

TEST(EmulatorPartition, ALinkShorterThanTheLookaheadIsRefusedByName) {
  const Config c = line(2, 1, 20);  // 20 ns + 1 ns < 100 ns
  const PartitionCheck r = check_partition(c, emulator_partition(c, 2));
  EXPECT_NE(r.error.find("the link s0/right -> s1/left"), std::string::npos) << r.error;
  // On one lcore the same fabric is fine.
  EXPECT_TRUE(check_partition(c, emulator_partition(c, 1)).error.empty());
}

TEST(EmulatorPartition, FlowtuneEdgesStayWithTheAllocator) {
  Config c = line(4, 2, 1000);
  c.flowtune_allocator.enabled = true;
  c.switches[3].flowtune.enabled = true;
  const std::vector<unsigned> slots = emulator_partition(c, 2);
  EXPECT_EQ(slots.back(), 0u);  // s3 joins the first lcore
  EXPECT_TRUE(check_partition(c, slots).error.empty());
  c.switches[2].flowtune.enabled = true;
  std::vector<unsigned> split = emulator_partition(c, 2);
  for (size_t i = split.size() - c.switches[3].ports.size(); i < split.size(); ++i) split[i] = 1;
  EXPECT_NE(check_partition(c, split).error.find("Flowtune edge"), std::string::npos);
}

// The `workers:` section's placement, as --check reads it: the n-th entry
// is slot n; a port placed twice, never, or unknown is named.
WorkerConfig worker(std::vector<PortRef> ports) {
  WorkerConfig w;
  w.ports = std::move(ports);
  return w;
}

std::vector<PortRef> ports_of(const Config& c, unsigned s) {
  std::vector<PortRef> out;
  for (const PortConfig& p : c.switches[s].ports) out.push_back({c.switches[s].name, p.name});
  return out;
}

TEST(EmulatorPartition, WorkersSectionPlacesPorts) {
  Config c = line(2, 1, 1000);
  c.workers = {worker(ports_of(c, 1)), worker(ports_of(c, 0))};
  std::string error;
  const std::vector<unsigned> slots = partition_of_workers(c, &error);
  ASSERT_TRUE(error.empty()) << error;
  EXPECT_EQ(slots, (std::vector<unsigned>{1, 1, 0, 0}));
  EXPECT_TRUE(check_partition(c, slots).error.empty());
}

TEST(EmulatorPartition, WorkersSectionNamesBadPorts) {
  Config c = line(2, 1, 1000);
  std::string error;
  c.workers = {worker(ports_of(c, 0))};
  EXPECT_TRUE(partition_of_workers(c, &error).empty());
  EXPECT_EQ(error, "workers: port s1/h0 is on no worker lcore");
  c.workers = {worker(ports_of(c, 0)), worker(ports_of(c, 1)), worker({{"s0", "h0"}})};
  error.clear();
  EXPECT_TRUE(partition_of_workers(c, &error).empty());
  EXPECT_EQ(error, "workers: port s0/h0 is placed twice");
  c.workers = {worker({{"s9", "h0"}})};
  error.clear();
  EXPECT_TRUE(partition_of_workers(c, &error).empty());
  EXPECT_EQ(error, "workers: unknown port s9/h0");
}

}  // namespace
}  // namespace sluice
