// Flowtune's allocator core on a simulated clock: rates for two flows into
// one host and for the survivor of a FLOWLET_END, the iteration schedule
// (at once after an idle spell, then every period, no catching up, and
// which iterations count as late), lease re-sends, flows keyed by sender,
// duplicate, unknown and refused entries, and churn within fixed tables.
#include "lib/mechanisms/flowtune/allocator_core.h"

#include <gtest/gtest.h>

#include <map>
#include <utility>

namespace sluice::flowtune {
namespace {

constexpr uint64_t kUs = 1'000;
constexpr uint64_t kMs = 1'000'000;
constexpr uint32_t kHostA = 0x0A000102, kHostB = 0x0A000202, kHostC = 0x0A000302;

AllocatorConfig config() {
  AllocatorConfig c;
  c.max_hosts = 8;
  c.max_flows = 16;
  c.max_senders = 4;
  c.host_rate_bps = 10'000'000'000ULL;
  c.iteration_ns = 10 * kUs;
  c.lease_ns = 10 * kMs;
  return c;
}

FlowletStart start(uint32_t id, uint32_t src, uint32_t dst) { return {id, src, dst, 1}; }

// Runs the core's own schedule from `from` to `to` (every instant it is due),
// keeping the last rate sent per (sender, flow id).
struct Driver {
  explicit Driver(AllocatorCore& c) : core(c) {}
  AllocatorCore& core;
  std::map<std::pair<uint32_t, uint32_t>, uint32_t> rates;
  uint64_t updates = 0, resends = 0;

  uint64_t run(uint64_t from, uint64_t to) {
    uint64_t now = from;
    for (;;) {
      const uint64_t due = core.next_due_ns();
      if (due == AllocatorCore::kNever) return now;
      now = std::max(now, due);
      if (now > to) return to;
      if (core.iteration_due(now)) take(core.iterate(now).updates);
      if (core.lease_due(now)) {
        const auto u = core.lease_pass(now);
        resends += u.size();
        take(u);
      }
    }
  }
  double rate(uint32_t sender, uint32_t flow_id) { return rates[{sender, flow_id}]; }
  void take(std::span<const AllocatorUpdate> u) {
    for (const AllocatorUpdate& x : u) rates[{x.sender, x.flow_id}] = x.rate_kbps;
    updates += u.size();
  }
};

TEST(AllocatorCore, TwoFlowsIntoOneHostGetHalfEachAndTheSurvivorAll) {
  AllocatorCounters counters;
  AllocatorCore core(config(), counters);
  Driver d(core);
  uint32_t sender;
  EXPECT_EQ(core.flowlet_start(100, start(1, kHostA, kHostC), &sender), StartOutcome::kAdded);
  EXPECT_EQ(sender, 0u);
  EXPECT_EQ(core.flowlet_start(100, start(2, kHostB, kHostC), &sender), StartOutcome::kAdded);
  uint64_t now = d.run(0, 5 * kMs);
  const double half = 0.99 * 10e6 / 2;  // kbit/s
  EXPECT_NEAR(d.rate(0, 1), half, 0.01 * half);
  EXPECT_NEAR(d.rate(0, 2), half, 0.01 * half);
  EXPECT_EQ(core.counters().flows.get(), 2u);
  EXPECT_EQ(core.counters().hosts.get(), 3u);
  EXPECT_EQ(core.counters().links.get(), 6u);
  EXPECT_TRUE(core.flowlet_end(100, 1));
  now = d.run(now, now + 5 * kMs);
  EXPECT_NEAR(d.rate(0, 2), 0.99 * 10e6, 0.01 * 0.99 * 10e6);
  EXPECT_TRUE(core.flowlet_end(100, 2));
  EXPECT_EQ(core.next_due_ns(), AllocatorCore::kNever);
  EXPECT_FALSE(core.iteration_due(now + kMs));
  EXPECT_FALSE(core.lease_due(now + kMs));
}

TEST(AllocatorCore, IteratesAtOnceAfterIdleThenEveryPeriodWithoutCatchingUp) {
  AllocatorCounters counters;
  AllocatorCore core(config(), counters);
  uint32_t sender;
  EXPECT_EQ(core.next_due_ns(), AllocatorCore::kNever);
  const uint64_t t0 = 3 * kMs;
  core.flowlet_start(1, start(1, kHostA, kHostB), &sender);
  ASSERT_TRUE(core.iteration_due(t0));
  AllocatorCore::Iteration it = core.iterate(t0);
  EXPECT_FALSE(it.judged);  // the first after an idle spell is not late
  EXPECT_EQ(it.updates.size(), 1u);
  EXPECT_FALSE(core.iteration_due(t0 + 10 * kUs - 1));
  EXPECT_TRUE(core.iteration_due(t0 + 10 * kUs));
  it = core.iterate(t0 + 10 * kUs);
  EXPECT_TRUE(it.judged);
  EXPECT_EQ(it.late_ns, 0u);
  // 25 us late: counted, and the next is a period after it, not before.
  it = core.iterate(t0 + 45 * kUs);
  EXPECT_TRUE(it.judged);
  EXPECT_EQ(it.late_ns, 25 * kUs);
  EXPECT_FALSE(core.iteration_due(t0 + 54 * kUs));
  EXPECT_TRUE(core.iteration_due(t0 + 55 * kUs));
  EXPECT_EQ(core.counters().iterations.get(), 3u);
  // All flows gone and back: the schedule restarts, unjudged.
  core.flowlet_end(1, 1);
  core.flowlet_start(1, start(2, kHostA, kHostB), &sender);
  ASSERT_TRUE(core.iteration_due(t0 + 55 * kUs));
  EXPECT_FALSE(core.iterate(t0 + 90 * kUs).judged);
}

TEST(AllocatorCore, AStableRateIsSentAgainWithinTheLease) {
  AllocatorCounters counters;
  AllocatorCore core(config(), counters);
  Driver d(core);
  uint32_t sender;
  core.flowlet_start(1, start(1, kHostA, kHostB), &sender);
  d.run(0, 4 * kMs);
  EXPECT_EQ(d.resends, 0u);  // nothing sent lease/2 ago yet
  const uint64_t before = d.updates;
  d.run(4 * kMs, 60 * kMs);
  // Alone on its links the rate settles at once: what is sent after that
  // is the lease, at most 3/4 of a lease apart and at least half.
  EXPECT_GE(d.resends, 60 / 7 - 1);
  EXPECT_LE(d.resends, 60 / 5 + 1);
  EXPECT_EQ(d.updates - before, d.resends);
  EXPECT_EQ(core.counters().lease_resends.get(), d.resends);
  EXPECT_EQ(core.counters().updates.get(), d.updates);
}

TEST(AllocatorCore, FlowsAreKeyedBySender) {
  AllocatorCounters counters;
  AllocatorCore core(config(), counters);
  uint32_t s1, s2;
  EXPECT_EQ(core.flowlet_start(11, start(5, kHostA, kHostC), &s1), StartOutcome::kAdded);
  EXPECT_EQ(core.flowlet_start(22, start(5, kHostB, kHostC), &s2), StartOutcome::kAdded);
  EXPECT_EQ(s1, 0u);
  EXPECT_EQ(s2, 1u);
  EXPECT_EQ(core.flowlet_start(11, start(5, kHostA, kHostC), &s1), StartOutcome::kDuplicate);
  EXPECT_EQ(core.counters().start_duplicate.get(), 1u);
  EXPECT_FALSE(core.flowlet_end(33, 5));  // an unknown sender
  EXPECT_TRUE(core.flowlet_end(22, 5));
  EXPECT_FALSE(core.flowlet_end(22, 5));  // already ended
  EXPECT_EQ(core.counters().end_unknown.get(), 2u);
  EXPECT_EQ(core.flow_count(), 1u);
  const AllocatorCore::Iteration it = core.iterate(0);
  ASSERT_EQ(it.updates.size(), 1u);
  EXPECT_EQ(it.updates[0].sender, 0u);
  EXPECT_EQ(it.updates[0].flow_id, 5u);
}

TEST(AllocatorCore, RefusesWhenATableIsFull) {
  AllocatorConfig c = config();
  c.max_hosts = 2;
  c.max_flows = 2;
  c.max_senders = 1;
  AllocatorCounters counters;
  AllocatorCore core(c, counters);
  uint32_t s;
  EXPECT_EQ(core.flowlet_start(1, start(1, kHostA, kHostB), &s), StartOutcome::kAdded);
  EXPECT_EQ(core.flowlet_start(1, start(2, kHostA, kHostC), &s), StartOutcome::kRefused);  // hosts
  EXPECT_EQ(core.flowlet_start(2, start(3, kHostB, kHostA), &s),
            StartOutcome::kRefused);  // senders
  EXPECT_EQ(s, AllocatorCore::kNoSender);
  EXPECT_EQ(core.flowlet_start(1, start(4, kHostB, kHostA), &s), StartOutcome::kAdded);
  EXPECT_EQ(core.flowlet_start(1, start(5, kHostB, kHostA), &s), StartOutcome::kRefused);  // flows
  EXPECT_EQ(core.counters().start_refused.get(), 3u);
  EXPECT_EQ(core.counters().starts.get(), 2u);
}

TEST(AllocatorCore, ChurnStaysWithinItsTables) {
  AllocatorCounters counters;
  AllocatorCore core(config(), counters);
  Driver d(core);
  uint32_t s;
  uint64_t now = 0;
  for (uint32_t round = 1; round <= 5000; ++round) {
    ASSERT_EQ(
        core.flowlet_start(
            round % 3,
            start(round, kHostA + (round % 5) * 0x100, kHostA + ((round + 1) % 5) * 0x100), &s),
        StartOutcome::kAdded)
        << round;
    if (round > 12) {
      ASSERT_TRUE(core.flowlet_end((round - 12) % 3, round - 12)) << round;
    }
    now = d.run(now, now + 7 * kUs);
    ASSERT_LE(core.flow_count(), 13u);
  }
  EXPECT_EQ(core.counters().starts.get(), 5000u);
  EXPECT_EQ(core.counters().start_refused.get(), 0u);
  EXPECT_EQ(core.host_count(), 5u);
}

}  // namespace
}  // namespace sluice::flowtune
