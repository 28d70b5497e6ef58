#include "lib/tm/schedulers/drr_scheduler.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <deque>
#include <vector>

#include "lib/tm/egress_port.h"

namespace sluice {
namespace {

// Queues of packet sizes driven through the scheduler alone.
struct Harness {
  DrrScheduler sched;
  std::vector<std::deque<uint32_t>> queues;

  Harness(unsigned n, uint32_t quantum, SchedulerKind kind, bool priority_last = false)
      : sched(n, quantum, kind, priority_last), queues(n) {}

  void push(unsigned q, uint32_t bytes) {
    queues[q].push_back(bytes);
    sched.set_backlogged(q);
  }
  int next() {
    int q = sched.pick([this](unsigned i) { return queues[i].front(); });
    if (q == DrrScheduler::kNone) return q;
    uint32_t b = queues[q].front();
    queues[q].pop_front();
    sched.sent(q, b);
    if (queues[q].empty()) sched.set_empty(q);
    return q;
  }
};

TEST(DrrScheduler, OrderWorkedByHand) {
  // Quantum 1000. q0: 600-byte packets, q1: 400, q2: 1000.
  // Round 1: q0 +1000 sends 600 (400 left); q1 +1000 sends 400, 400 (200 left);
  //          q2 +1000 sends 1000.
  // Round 2: q0 400+1000 sends 600, 600 (200 left); q1 200+1000 sends 3 x 400;
  //          q2 sends 1000.
  Harness h(3, 1000, SchedulerKind::kDrr);
  for (int i = 0; i < 10; ++i) {
    h.push(0, 600);
    h.push(1, 400);
    h.push(2, 1000);
  }
  std::vector<int> order;
  for (int i = 0; i < 10; ++i) order.push_back(h.next());
  EXPECT_EQ(order, (std::vector<int>{0, 1, 1, 2, 0, 0, 1, 1, 1, 2}));
}

TEST(DrrScheduler, StrictPriorityServesHighestIndexFirst) {
  Harness h(8, 1600, SchedulerKind::kStrictPriority);
  for (int i = 0; i < 2; ++i) {
    h.push(0, 100);
    h.push(2, 100);
    h.push(5, 100);
  }
  EXPECT_EQ(h.next(), 5);
  h.push(7, 1500);  // a higher class arriving jumps ahead
  EXPECT_EQ(h.next(), 7);
  std::vector<int> rest;
  for (int q; (q = h.next()) != DrrScheduler::kNone;) rest.push_back(q);
  EXPECT_EQ(rest, (std::vector<int>{5, 2, 2, 0, 0}));
}

// The replies' queue (the last) goes whenever it has a packet and is not
// paused; the round among the others goes on as if it were not there.
TEST(DrrScheduler, PriorityLastGoesFirstOutsideTheRound) {
  Harness h(3, 1000, SchedulerKind::kDrr, true);
  for (int i = 0; i < 10; ++i) {
    h.push(0, 600);
    h.push(1, 400);
  }
  h.push(2, 64);
  h.push(2, 64);
  std::vector<int> order;
  for (int i = 0; i < 4; ++i) order.push_back(h.next());
  EXPECT_EQ(order, (std::vector<int>{2, 2, 0, 1}));
  h.push(2, 64);  // arrives mid-round: next, then the round resumes at queue 1
  order.clear();
  for (int i = 0; i < 4; ++i) order.push_back(h.next());
  EXPECT_EQ(order, (std::vector<int>{2, 1, 0, 0}));
  EXPECT_EQ(h.sched.deficit(2), 0) << "no deficit: it is outside the round";
  h.sched.set_paused(2);
  h.push(2, 64);
  EXPECT_NE(h.next(), 2) << "a paused reply queue waits";
}

TEST(DrrScheduler, PausedQueueSkippedAndNotCredited) {
  Harness h(2, 1000, SchedulerKind::kDrr);
  for (int i = 0; i < 50; ++i) {
    h.push(0, 1000);
    h.push(1, 1000);
  }
  h.sched.set_paused(1);
  for (int i = 0; i < 20; ++i) EXPECT_EQ(h.next(), 0);
  EXPECT_EQ(h.sched.deficit(1), 0);
  EXPECT_EQ(h.queues[1].size(), 50u);
  h.sched.set_paused(0);
  EXPECT_EQ(h.next(), DrrScheduler::kNone);  // all backlogged queues paused
  h.sched.clear_paused(0);
  h.sched.clear_paused(1);
  // Equal packets and quantum: strict alternation again.
  int a = h.next();
  int b = h.next();
  EXPECT_NE(a, b);
}

TEST(DrrScheduler, BytesAreFairAmongBackloggedQueues) {
  // Through a whole (unshaped) egress port: three queues kept backlogged with
  // 64-, 1500- and 700-byte packets share bytes equally; at any instant the
  // counts differ by at most one quantum plus one packet.
  SharedBuffer buffer(1ull << 30, 8.0);
  EgressPortConfig cfg;
  cfg.num_queues = 4;
  cfg.drr_quantum_bytes = 1600;
  EgressPort port(cfg, &buffer);
  const uint32_t sizes[3] = {64, 1500, 700};
  TmPacket p;
  for (uint16_t q = 0; q < 3; ++q) {
    p.bytes = sizes[q];
    for (int i = 0; i < 64; ++i)
      ASSERT_NE(port.enqueue(0, q, p, false).verdict, EnqueueVerdict::kDropped);
  }
  uint64_t bytes[3] = {0, 0, 0};
  TmPacket out[1];
  for (int i = 0; i < 300'000; ++i) {
    ASSERT_EQ(port.dequeue_burst(i, out, 1), 1u);
    uint16_t q = out[0].queue;
    bytes[q] += out[0].bytes;
    p.bytes = out[0].bytes;
    ASSERT_NE(port.enqueue(i, q, p, false).verdict, EnqueueVerdict::kDropped);  // stay backlogged
    uint64_t hi = std::max({bytes[0], bytes[1], bytes[2]});
    uint64_t lo = std::min({bytes[0], bytes[1], bytes[2]});
    ASSERT_LE(hi - lo, 1600u + 1500u) << "after " << i;
  }
  uint64_t total = bytes[0] + bytes[1] + bytes[2];
  for (uint64_t b : bytes) EXPECT_NEAR(static_cast<double>(b) / total, 1.0 / 3, 1e-3);
}

}  // namespace
}  // namespace sluice
