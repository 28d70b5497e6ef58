// Flowtune's allocator: NED convergence to weighted proportional fairness
// (hand-checkable closed forms), zero-price fallback, prices kept across
// churn, F-NORM vs U-NORM, the (1 − threshold)·c headroom, notification
// threshold, O(path) add/remove and fixed storage.
#include "lib/mechanisms/flowtune/ned_allocator.h"

#include <gtest/gtest.h>

#include <array>
#include <vector>

#include "lib/mechanisms/flowtune/leaf_spine.h"
#include "lib/mechanisms/flowtune/one_big_switch.h"

namespace sluice::flowtune {
namespace {

constexpr double kT = kDefaultThreshold;

NedConfig config(uint32_t flows, uint32_t links) {
  NedConfig c;
  c.max_flows = flows;
  c.max_links = links;
  return c;
}

void run(NedAllocator& a, int iterations) {
  for (int i = 0; i < iterations; ++i) a.iterate();
}

// Sum of normalised rates over a link, from the outside.
double normalised_on(const NedAllocator& a, const std::vector<FlowId>& flows,
                     const std::vector<std::vector<LinkId>>& paths, LinkId l) {
  double sum = 0;
  for (size_t i = 0; i < flows.size(); ++i) {
    for (LinkId p : paths[i]) {
      if (p == l) sum += a.normalised_rate(flows[i]);
    }
  }
  return sum;
}

TEST(NedAllocator, TwoEqualFlowsOnOneLinkConvergeToHalfEach) {
  for (double c : {1.0, 10.0, 100.0}) {
    NedAllocator a(config(4, 1));
    const LinkId l = a.add_link(c);
    const std::array<LinkId, 1> path{l};
    const FlowId f1 = a.add_flow(1, path);
    const FlowId f2 = a.add_flow(1, path);
    run(a, 200);
    // Optimiser: x = c/2 at price 2/c.
    EXPECT_NEAR(a.rate(f1), c / 2, 1e-6 * c) << c;
    EXPECT_NEAR(a.price(l), 2 / c, 1e-6 / c) << c;
    a.normalise(NormMode::kFNorm);
    // Output: (1 − t)·c/2 each, within 1%.
    EXPECT_NEAR(a.normalised_rate(f1), (1 - kT) * c / 2, 0.01 * c / 2) << c;
    EXPECT_NEAR(a.normalised_rate(f2), (1 - kT) * c / 2, 0.01 * c / 2) << c;
  }
}

TEST(NedAllocator, WeightsOneToTwoGetAThirdAndTwoThirds) {
  NedAllocator a(config(4, 1));
  const LinkId l = a.add_link(3);
  const std::array<LinkId, 1> path{l};
  const FlowId f1 = a.add_flow(1, path);
  const FlowId f2 = a.add_flow(2, path);
  run(a, 200);
  EXPECT_NEAR(a.rate(f1), 1.0, 1e-6);
  EXPECT_NEAR(a.rate(f2), 2.0, 1e-6);
  a.normalise(NormMode::kFNorm);
  EXPECT_NEAR(a.normalised_rate(f1), (1 - kT) * 1.0, 0.01);
  EXPECT_NEAR(a.normalised_rate(f2), (1 - kT) * 2.0, 0.02);
}

// L links in a line, one long flow over all, one short flow per link. With
// log utilities: max log x0 + Σ log x_i s.t. x0 + x_i <= c gives
// x0 = c/(L+1), x_i = L·c/(L+1).
TEST(NedAllocator, ParkingLotReachesProportionalFairness) {
  for (uint32_t L : {2u, 3u, 5u}) {
    const double c = 10;
    NedAllocator a(config(16, 8));
    std::vector<LinkId> all;
    for (uint32_t i = 0; i < L; ++i) all.push_back(a.add_link(c));
    std::vector<FlowId> flows;
    std::vector<std::vector<LinkId>> paths;
    paths.push_back(all);
    flows.push_back(a.add_flow(1, all));
    for (LinkId l : all) {
      paths.push_back({l});
      flows.push_back(a.add_flow(1, paths.back()));
    }
    run(a, 300);
    a.normalise(NormMode::kFNorm);
    const double scale = 1 - kT;
    EXPECT_NEAR(a.normalised_rate(flows[0]), scale * c / (L + 1), 0.01 * c / (L + 1)) << L;
    for (uint32_t i = 1; i <= L; ++i) {
      EXPECT_NEAR(a.normalised_rate(flows[i]), scale * L * c / (L + 1), 0.01 * L * c / (L + 1))
          << L;
    }
    for (LinkId l : all) {
      EXPECT_LE(normalised_on(a, flows, paths, l), scale * c * (1 + 1e-12)) << L;
    }
  }
}

TEST(NedAllocator, ZeroPriceFallsBackToSmallestCapacityOnThePath) {
  NedAllocator a(config(2, 2));
  const LinkId big = a.add_link(100);
  const LinkId small = a.add_link(50);
  const std::array<LinkId, 2> path{big, small};
  const FlowId f = a.add_flow(1, path);
  EXPECT_DOUBLE_EQ(a.rate(f), 0.5);  // 1 / (1 + 1), prices start at 1
  a.iterate();
  // Both links far under-used: 1 + 0.4·(0.5 − c)/0.25 < 0.
  EXPECT_EQ(a.price(big), 0.0);
  EXPECT_EQ(a.price(small), 0.0);
  a.iterate();
  EXPECT_DOUBLE_EQ(a.rate(f), 50.0);
  // At 50 the small link is exactly full and the big one under-used: both
  // prices stay 0 and the rate stays at the fallback.
  a.iterate();
  EXPECT_DOUBLE_EQ(a.rate(f), 50.0);
  EXPECT_EQ(a.price(small), 0.0);
}

TEST(NedAllocator, PricesStartAtOneOnceAndSurviveChurn) {
  NedAllocator a(config(4, 1));
  const LinkId l = a.add_link(2);
  EXPECT_EQ(a.price(l), 1.0);
  const std::array<LinkId, 1> path{l};
  const FlowId f1 = a.add_flow(1, path);
  const FlowId f2 = a.add_flow(1, path);
  run(a, 200);
  EXPECT_NEAR(a.price(l), 1.0, 1e-9);  // two flows on c = 2: price 1
  a.remove_flow(f2);
  run(a, 200);
  EXPECT_NEAR(a.price(l), 0.5, 1e-9);  // one flow: price 1/c
  a.remove_flow(f1);
  EXPECT_EQ(a.flow_count(), 0u);
  run(a, 50);  // no flows: the price is neither reset nor updated
  EXPECT_NEAR(a.price(l), 0.5, 1e-9);
  EXPECT_EQ(a.link_sum(l), 0.0);
  const FlowId f3 = a.add_flow(1, path);
  // Its first rate comes from the kept price: already the right one.
  EXPECT_NEAR(a.rate(f3), 2.0, 1e-8);
  EXPECT_NEAR(a.link_sum(l), 2.0, 1e-8);
}

// Two links each with one flow at equilibrium; a second flow arrives on link
// A. Before the next iteration link A is over-allocated twofold: U-NORM
// halves the flow on B as well, F-NORM leaves it at its capacity.
TEST(NedAllocator, UNormScalesEveryoneFNormOnlyTheCongested) {
  NedAllocator a(config(4, 2));
  const LinkId la = a.add_link(1);
  const LinkId lb = a.add_link(1);
  const std::array<LinkId, 1> pa{la};
  const std::array<LinkId, 1> pb{lb};
  const FlowId a1 = a.add_flow(1, pa);
  const FlowId b1 = a.add_flow(1, pb);
  run(a, 50);
  const FlowId a2 = a.add_flow(1, pa);
  EXPECT_NEAR(a.link_sum(la), 2.0, 1e-9);

  a.normalise(NormMode::kFNorm);
  const double f_total = a.normalised_rate(a1) + a.normalised_rate(a2) + a.normalised_rate(b1);
  EXPECT_NEAR(a.normalised_rate(a1), (1 - kT) / 2, 1e-9);
  EXPECT_NEAR(a.normalised_rate(a2), (1 - kT) / 2, 1e-9);
  EXPECT_NEAR(a.normalised_rate(b1), 1 - kT, 1e-9);

  a.normalise(NormMode::kUNorm);
  const double u_total = a.normalised_rate(a1) + a.normalised_rate(a2) + a.normalised_rate(b1);
  EXPECT_NEAR(a.normalised_rate(b1), (1 - kT) / 2, 1e-9);
  EXPECT_NEAR(a.normalised_rate(a1) / a.normalised_rate(b1), 1.0, 1e-9);  // ratios kept
  EXPECT_LT(u_total, f_total - 0.4);
}

TEST(NedAllocator, FNormScalesUpAnUnderUsedLinkNoFloor) {
  NedAllocator a(config(2, 1));
  const LinkId l = a.add_link(4);
  const std::array<LinkId, 1> path{l};
  const FlowId f = a.add_flow(1, path);  // x = 1 at price 1, c = 4
  a.normalise(NormMode::kFNorm);
  EXPECT_NEAR(a.normalised_rate(f), (1 - kT) * 4, 1e-9);
}

TEST(NedAllocator, NormalisedSumOnASaturatedLinkIsWithinHeadroom) {
  NedAllocator a(config(64, 32));
  OneBigSwitch obs(a, 8, 1.0);
  ASSERT_TRUE(obs.ok());
  std::vector<FlowId> flows;
  std::vector<std::vector<LinkId>> paths;
  // Incast onto host 0 plus some cross traffic.
  for (uint32_t src = 1; src < 8; ++src) {
    const FlowPath p = obs.path(src, 0);
    paths.emplace_back(p.view().begin(), p.view().end());
    flows.push_back(a.add_flow(1, p.view()));
  }
  for (uint32_t src = 1; src < 4; ++src) {
    const FlowPath p = obs.path(src, src + 4);
    paths.emplace_back(p.view().begin(), p.view().end());
    flows.push_back(a.add_flow(1 + src, p.view()));
  }
  for (int it = 0; it < 40; ++it) {
    a.iterate();  // during convergence too, not only at the end
    for (NormMode m : {NormMode::kFNorm, NormMode::kUNorm}) {
      a.normalise(m);
      for (LinkId l = 0; l < a.link_count(); ++l) {
        EXPECT_LE(normalised_on(a, flows, paths, l), (1 - kT) * a.capacity(l) * (1 + 1e-12));
      }
    }
  }
  a.normalise(NormMode::kFNorm);
  EXPECT_NEAR(normalised_on(a, flows, paths, obs.down(0)), 1 - kT, 1e-3);
}

TEST(NedAllocator, NotifiesOnlyMovesBeyondTheThreshold) {
  NedAllocator a(config(4, 1));
  const LinkId l = a.add_link(1);
  const std::array<LinkId, 1> path{l};
  const FlowId f = a.add_flow(1, path);
  run(a, 20);
  a.normalise(NormMode::kFNorm);
  std::array<RateNotice, 4> out{};
  // Never sent: notified.
  ASSERT_EQ(a.collect_notices(out), 1u);
  EXPECT_EQ(out[0].flow, f);
  EXPECT_NEAR(out[0].rate, 1 - kT, 1e-9);
  EXPECT_DOUBLE_EQ(a.last_sent(f), out[0].rate);
  EXPECT_EQ(a.collect_notices(out), 0u);
  // +0.5%: within the threshold, not sent; last_sent kept.
  ASSERT_TRUE(a.set_link_capacity(l, 1.005));
  a.normalise(NormMode::kFNorm);
  EXPECT_EQ(a.collect_notices(out), 0u);
  EXPECT_NEAR(a.last_sent(f), 1 - kT, 1e-9);
  // +5% from what was last sent: notified and recorded.
  ASSERT_TRUE(a.set_link_capacity(l, 1.05));
  a.normalise(NormMode::kFNorm);
  ASSERT_EQ(a.collect_notices(out), 1u);
  EXPECT_NEAR(out[0].rate, (1 - kT) * 1.05, 1e-9);
  EXPECT_NEAR(a.last_sent(f), (1 - kT) * 1.05, 1e-9);
  EXPECT_EQ(a.collect_notices(out), 0u);
  // Small steps that add up are measured from the last sent rate.
  ASSERT_TRUE(a.set_link_capacity(l, 1.05 * 1.006));
  a.normalise(NormMode::kFNorm);
  EXPECT_EQ(a.collect_notices(out), 0u);
  ASSERT_TRUE(a.set_link_capacity(l, 1.05 * 1.012));
  a.normalise(NormMode::kFNorm);
  EXPECT_EQ(a.collect_notices(out), 1u);
}

TEST(NedAllocator, NoticesThatDoNotFitStayPending) {
  NedAllocator a(config(4, 1));
  const LinkId l = a.add_link(1);
  const std::array<LinkId, 1> path{l};
  for (int i = 0; i < 3; ++i) a.add_flow(1, path);
  a.normalise(NormMode::kFNorm);
  std::array<RateNotice, 2> out{};
  EXPECT_EQ(a.collect_notices(out), 2u);
  EXPECT_EQ(a.collect_notices(out), 1u);
  EXPECT_EQ(a.collect_notices(out), 0u);
}

// Removing a flow touches only its own links: the other links' sums are
// unchanged and the output right after removal already reflects it.
TEST(NedAllocator, AddAndRemoveTouchOnlyTheFlowsLinks) {
  NedAllocator a(config(8, 3));
  const LinkId l0 = a.add_link(1);
  const LinkId l1 = a.add_link(1);
  const LinkId l2 = a.add_link(1);
  const std::array<LinkId, 2> p01{l0, l1};
  const std::array<LinkId, 1> p1{l1};
  const std::array<LinkId, 1> p2{l2};
  const FlowId long_flow = a.add_flow(1, p01);
  const FlowId short1 = a.add_flow(1, p1);
  const FlowId other = a.add_flow(1, p2);
  run(a, 200);
  const double sum2 = a.link_sum(l2);
  const double p2_price = a.price(l2);
  EXPECT_EQ(a.link_flows(l1), 2u);
  ASSERT_TRUE(a.remove_flow(short1));
  EXPECT_FALSE(a.remove_flow(short1));
  EXPECT_EQ(a.link_flows(l1), 1u);
  EXPECT_EQ(a.link_flows(l0), 1u);
  EXPECT_DOUBLE_EQ(a.link_sum(l2), sum2);
  EXPECT_DOUBLE_EQ(a.price(l2), p2_price);
  EXPECT_NEAR(a.link_sum(l1), a.rate(long_flow), 1e-12);
  // Output at once: the long flow now fills its path.
  a.normalise(NormMode::kFNorm);
  EXPECT_NEAR(a.normalised_rate(long_flow), 1 - kT, 1e-9);
  EXPECT_NEAR(a.normalised_rate(other), 1 - kT, 1e-6);
  // And the optimiser follows: long flow alone on l0, l1 -> c (prices 1/2).
  run(a, 200);
  EXPECT_NEAR(a.rate(long_flow), 1.0, 1e-6);
  EXPECT_EQ(a.live(short1), false);
}

TEST(NedAllocator, RefusesBadInput) {
  NedAllocator a(config(1, 1));
  EXPECT_EQ(a.add_link(0), kInvalidLink);
  EXPECT_EQ(a.add_link(-1), kInvalidLink);
  const LinkId l = a.add_link(1);
  EXPECT_EQ(a.add_link(1), kInvalidLink);  // table full
  const std::array<LinkId, 1> path{l};
  const std::array<LinkId, 1> unknown{7};
  const std::array<LinkId, kMaxPathLinks + 1> too_long{};
  EXPECT_EQ(a.add_flow(0, path), kInvalidFlow);
  EXPECT_EQ(a.add_flow(1, std::span<const LinkId>{}), kInvalidFlow);
  EXPECT_EQ(a.add_flow(1, unknown), kInvalidFlow);
  EXPECT_EQ(a.add_flow(1, too_long), kInvalidFlow);
  EXPECT_NE(a.add_flow(1, path), kInvalidFlow);
  EXPECT_EQ(a.add_flow(1, path), kInvalidFlow);  // table full
  EXPECT_FALSE(a.set_link_capacity(3, 1));
  EXPECT_FALSE(a.remove_flow(5));
}

// Storage is fixed at construction: heavy churn with iterations in between
// reuses freed slots and never grows past max_flows.
TEST(NedAllocator, ChurnReusesSlotsWithinFixedCapacity) {
  NedAllocator a(config(16, 16));
  OneBigSwitch obs(a, 8, 1.0);
  ASSERT_TRUE(obs.ok());
  std::vector<FlowId> live;
  uint32_t seed = 1;
  for (int round = 0; round < 2000; ++round) {
    seed = seed * 1103515245u + 12345u;
    const uint32_t src = (seed >> 8) % 8;
    const uint32_t dst = (src + 1 + (seed >> 16) % 7) % 8;
    if (live.size() < 16 && ((seed >> 4) & 1)) {
      const FlowId f = a.add_flow(1 + (seed >> 20) % 3, obs.path(src, dst).view());
      ASSERT_NE(f, kInvalidFlow);
      ASSERT_LT(f, 16u);
      live.push_back(f);
    } else if (!live.empty()) {
      const size_t i = (seed >> 12) % live.size();
      ASSERT_TRUE(a.remove_flow(live[i]));
      live[i] = live.back();
      live.pop_back();
    }
    a.iterate();
    ASSERT_EQ(a.flow_count(), live.size());
  }
  // Sums stay consistent with the live flows (nothing leaked on removal).
  double total_up = 0;
  for (uint32_t h = 0; h < 8; ++h) total_up += a.link_sum(obs.up(h));
  double total_x = 0;
  for (FlowId f : live) total_x += a.rate(f);
  EXPECT_NEAR(total_up, total_x, 1e-9 * (1 + total_x));
  EXPECT_EQ(a.max_flows(), 16u);
}

TEST(FlowtuneTopology, OneBigSwitchUsesUpOfSourceAndDownOfDestination) {
  NedAllocator a(config(4, 8));
  OneBigSwitch obs(a, 4, 10.0);
  ASSERT_TRUE(obs.ok());
  const FlowPath p = obs.path(1, 3);
  ASSERT_EQ(p.size, 2u);
  EXPECT_EQ(p.links[0], obs.up(1));
  EXPECT_EQ(p.links[1], obs.down(3));
  EXPECT_EQ(a.capacity(obs.down(3)), 10.0);
  EXPECT_EQ(obs.path(1, 4).size, 0u);
  NedAllocator small(config(1, 3));
  EXPECT_FALSE(OneBigSwitch(small, 2, 1.0).ok());
}

TEST(FlowtuneTopology, LeafSpineFullPathAndABottleneckInTheFabric) {
  LeafSpineShape shape;
  shape.leaves = 2;
  shape.spines = 2;
  shape.hosts_per_leaf = 2;
  shape.host_capacity = 1;
  shape.fabric_capacity = 1;
  NedAllocator a(config(8, 32));
  LeafSpine ls(a, shape);
  ASSERT_TRUE(ls.ok());
  EXPECT_EQ(a.link_count(), 2u * 4 + 2u * 4);
  const FlowPath same = ls.path(0, 1, 0);
  ASSERT_EQ(same.size, 2u);
  const FlowPath cross = ls.path(0, 2, 1);
  ASSERT_EQ(cross.size, 4u);
  EXPECT_EQ(cross.links[0], ls.up(0));
  EXPECT_EQ(cross.links[1], ls.leaf_up(0, 1));
  EXPECT_EQ(cross.links[2], ls.spine_down(1, 1));
  EXPECT_EQ(cross.links[3], ls.down(2));
  // Hosts 0 and 1 both send to leaf 1 through spine 0: the leaf-up link
  // (0, 0) is the shared bottleneck, so each gets half.
  const FlowId f0 = a.add_flow(1, ls.path(0, 2, 0).view());
  const FlowId f1 = a.add_flow(1, ls.path(1, 3, 0).view());
  run(a, 200);
  a.normalise(NormMode::kFNorm);
  EXPECT_NEAR(a.normalised_rate(f0), (1 - kT) / 2, 0.005);
  EXPECT_NEAR(a.normalised_rate(f1), (1 - kT) / 2, 0.005);
  EXPECT_EQ(ls.path(0, 2, 2).size, 0u);
}

}  // namespace
}  // namespace sluice::flowtune
