// Flowtune's allocator in the fabric on a simulated clock: news reaches the
// core one control delay after an edge sent it and rates reach their edge
// one delay after the pass that made them (so a new flowlet's first rate
// arrives two delays after its START), iterations every period while flows
// are live and none after, rates to the right edges, RATE_UPDATE messages
// counted as sluice-allocator would send them, a zero delay, and a full
// path counting its losses.
#include "lib/mechanisms/flowtune/fabric_allocator.h"

#include <gtest/gtest.h>

#include <tuple>
#include <vector>

namespace sluice::flowtune {
namespace {

constexpr uint64_t kUs = 1'000;
constexpr uint32_t kHostA = 0x0A000102, kHostB = 0x0A000202, kHostC = 0x0A000302;

FabricAllocatorConfig config(uint32_t edges, uint64_t delay_ns) {
  FabricAllocatorConfig c;
  c.core.max_hosts = 512;
  c.core.max_flows = 512;
  c.core.host_rate_bps = 1'000'000'000ULL;
  c.core.iteration_ns = 10 * kUs;
  c.core.lease_ns = 10'000'000;
  c.control_delay_ns = delay_ns;
  c.edges = edges;
  return c;
}

struct Delivered {
  uint64_t at;
  uint32_t edge, flow_id, kbps;
};

// Runs the allocator at every instant it is due up to `to`.
struct Clock {
  explicit Clock(FabricAllocator& allocator) : a(allocator) {}
  FabricAllocator& a;
  std::vector<Delivered> got;
  uint64_t runs = 0;
  void until(uint64_t to) {
    for (uint64_t t = a.next_due_ns(); t <= to; t = a.next_due_ns()) {
      a.run(t, [&](uint32_t e, uint32_t f, uint32_t k) { got.push_back({t, e, f, k}); });
      ++runs;
    }
  }
};

TEST(FabricAllocator, TheFirstRateArrivesTwoDelaysAfterTheStart) {
  FabricAllocator a(config(1, 8'500));
  Clock c{a};
  EXPECT_EQ(a.next_due_ns(), FabricAllocator::kNever);
  ASSERT_TRUE(a.send_start(0, {7, kHostA, kHostB, 1}, 100 * kUs));
  EXPECT_EQ(a.next_due_ns(), 108'500u);
  c.until(108'500);
  EXPECT_TRUE(c.got.empty());
  EXPECT_EQ(a.core().flow_count(), 1u);  // arrived, iterated at once
  EXPECT_EQ(a.counters().core.iterations.get(), 1u);
  EXPECT_EQ(a.next_due_ns(), 117'000u);  // its rate reaches the edge
  c.until(117'000);
  ASSERT_EQ(c.got.size(), 1u);
  EXPECT_EQ(c.got[0].at, 117'000u);
  EXPECT_EQ(c.got[0].edge, 0u);
  EXPECT_EQ(c.got[0].flow_id, 7u);
  EXPECT_EQ(c.got[0].kbps, 990'000u);  // alone: (1 - 0.01) of 1 Gb/s
  EXPECT_EQ(a.counters().rates_delivered.get(), 1u);
}

TEST(FabricAllocator, IteratesEveryPeriodWhileFlowsLiveAndStopsAfterTheLastEnd) {
  FabricAllocator a(config(1, 5 * kUs));
  Clock c{a};
  a.send_start(0, {1, kHostA, kHostB, 1}, 0);
  c.until(1'005 * kUs);
  // At 5 us, then every 10 us to 1005 us.
  EXPECT_EQ(a.counters().core.iterations.get(), 101u);
  a.send_end(0, 1, 1'006 * kUs);
  c.until(UINT64_MAX - 1);
  EXPECT_EQ(a.counters().core.iterations.get(), 101u);  // the END arrived at 1011 us
  EXPECT_EQ(a.core().flow_count(), 0u);
  EXPECT_EQ(a.next_due_ns(), FabricAllocator::kNever);
}

TEST(FabricAllocator, TwoEdgesIntoOneHostGetHalfEach) {
  FabricAllocator a(config(2, 5 * kUs));
  Clock c{a};
  a.send_start(0, {3, kHostA, kHostC, 1}, 0);
  a.send_start(1, {3, kHostB, kHostC, 1}, 20 * kUs);  // the same id at another edge
  c.until(2'000 * kUs);
  uint32_t last[2] = {0, 0};
  for (const Delivered& d : c.got) {
    ASSERT_LT(d.edge, 2u);
    EXPECT_EQ(d.flow_id, 3u);
    last[d.edge] = d.kbps;
  }
  EXPECT_NEAR(last[0], 495'000, 0.01 * 495'000);
  EXPECT_NEAR(last[1], 495'000, 0.01 * 495'000);
}

// Full paths: two flows from different hosts to different hosts share
// nothing in one big switch, so each gets its whole host link (0.99 of
// 1 Gb/s); across one shared fabric link of capacity 1 (1 Gb/s) they get
// half of it each, and a flow crossing a link of capacity 4 alone is held
// only by its host links.
TEST(FabricAllocator, FullPathsShareTheFabricLinksTheyCross) {
  constexpr uint32_t kHostD = 0x0A000402;
  FabricAllocatorConfig cfg = config(1, 0);
  cfg.core.max_fabric_links = 2;
  FabricAllocator a(cfg);
  const LinkId thin = a.add_fabric_link(1.0);
  const LinkId fat = a.add_fabric_link(4.0);
  ASSERT_NE(thin, kInvalidLink);
  ASSERT_NE(fat, kInvalidLink);
  Clock c{a};
  a.send_start(0, {1, kHostA, kHostC, 1}, 0, std::vector<LinkId>{thin});
  a.send_start(0, {2, kHostB, kHostD, 1}, 0, std::vector<LinkId>{thin, fat});
  c.until(2'000 * kUs);
  uint32_t last[3] = {0, 0, 0};
  for (const Delivered& d : c.got) last[d.flow_id] = d.kbps;
  EXPECT_NEAR(last[1], 495'000, 0.01 * 495'000);
  EXPECT_NEAR(last[2], 495'000, 0.01 * 495'000);
  a.send_end(0, 1, 2'000 * kUs);
  c.until(4'000 * kUs);
  for (const Delivered& d : c.got) last[d.flow_id] = d.kbps;
  EXPECT_NEAR(last[2], 990'000, 0.01 * 990'000);
  // A path with a host link in it (links 2 on are the hosts', added as
  // they first appear), or longer than kMaxVia, is refused.
  const uint64_t refused = a.counters().core.start_refused.get();
  a.send_start(0, {3, kHostA, kHostC, 1}, 4'000 * kUs, std::vector<LinkId>{2});
  a.send_start(0, {4, kHostA, kHostC, 1}, 4'000 * kUs,
               std::vector<LinkId>(FabricAllocator::kMaxVia + 1, fat));
  c.until(4'001 * kUs);
  EXPECT_EQ(a.counters().core.start_refused.get(), refused + 2);
}

TEST(FabricAllocator, RatesAreCountedAsRateUpdateMessagesPerEdgeAndPass) {
  FabricAllocator a(config(2, 1 * kUs));
  Clock c{a};
  // 200 flows from edge 0 and 3 from edge 1, all arriving together: the
  // first pass sends 200 rates to edge 0 (2 messages of <= 183) and 3 to
  // edge 1 (1 message).
  for (uint32_t i = 0; i < 200; ++i)
    a.send_start(0, {i + 1, kHostA + (i % 50) * 0x100, kHostC, 1}, 0);
  for (uint32_t i = 0; i < 3; ++i) a.send_start(1, {i + 1, kHostB, kHostA + i * 0x100, 1}, 0);
  c.until(1 * kUs);
  EXPECT_EQ(a.counters().core.updates.get(), 203u);
  EXPECT_EQ(a.counters().update_messages.get(), 3u);
  EXPECT_EQ(a.counters().update_bytes.get(), 3u * (8 + 28) + 203u * 8);
  EXPECT_EQ(a.rates_in_flight(), 203u);
  c.until(2 * kUs);
  EXPECT_EQ(c.got.size(), 203u);
}

TEST(FabricAllocator, WithNoDelayRatesArriveInTheSamePass) {
  FabricAllocator a(config(1, 0));
  std::vector<uint32_t> got;
  a.send_start(0, {9, kHostA, kHostB, 1}, 50);
  EXPECT_EQ(a.next_due_ns(), 50u);
  a.run(50, [&](uint32_t, uint32_t f, uint32_t) { got.push_back(f); });
  EXPECT_EQ(got, std::vector<uint32_t>{9});
}

TEST(FabricAllocator, AFullPathLosesAndCounts) {
  FabricAllocatorConfig cfg = config(1, 5 * kUs);
  cfg.news_in_flight = 2;
  cfg.rates_in_flight = 1;
  FabricAllocator a(cfg);
  Clock c{a};
  EXPECT_TRUE(a.send_start(0, {1, kHostA, kHostB, 1}, 0));
  EXPECT_TRUE(a.send_start(0, {2, kHostB, kHostA, 1}, 0));
  EXPECT_FALSE(a.send_start(0, {3, kHostA, kHostC, 1}, 0));
  EXPECT_EQ(a.counters().news_lost.get(), 1u);
  EXPECT_EQ(a.news_in_flight(), 2u);
  c.until(5 * kUs);  // two rates from the first pass, room for one
  EXPECT_EQ(a.counters().rates_lost.get(), 1u);
}

}  // namespace
}  // namespace sluice::flowtune
