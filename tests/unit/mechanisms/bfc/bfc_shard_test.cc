#include "lib/mechanisms/bfc/bfc_shard.h"

#include <gtest/gtest.h>

#include <array>
#include <deque>
#include <stdexcept>
#include <vector>

#include "lib/control/control_frame.h"

namespace sluice {
namespace {

// Port 0 faces a switch, port 1 a host, port 2 a switch (the egress under
// test unless said otherwise). 4 data queues per port keep the rotation
// short enough to follow by hand.
constexpr std::array<bool, 3> kFacing = {true, false, true};
constexpr std::array<bool, 3> kOwned = {true, true, true};
constexpr uint64_t k10G = 10'000'000'000;
constexpr uint64_t k25G = 25'000'000'000;
constexpr std::array<uint64_t, 3> kRates = {k10G, k25G, k10G};
constexpr uint16_t kEgress = 2;
constexpr uint32_t kQueues = 4;
constexpr uint64_t kHopRtt = 10'000;  // 10 us
constexpr uint64_t kSticky = 20'000;  // 2 x hop RTT
// Th at 10 Gbit/s: 10 us x 10e9 bit/s / 8 = 12'500 bytes for one active queue.
constexpr uint64_t kTh1 = 12'500;
constexpr uint64_t kTh2 = 6'250;

BfcShardConfig config(BfcAssignment mode = BfcAssignment::kDynamic) {
  BfcShardConfig c;
  c.mode = mode;
  c.switch_facing = kFacing;
  c.rate_bps = kRates;
  c.egress_ports = kOwned;  // a slice of 400 entries per port
  c.queues_per_port = kQueues;
  c.hop_rtt_ns = kHopRtt;
  c.sticky_ns = kSticky;
  c.rng_seed = 7;
  return c;
}

// A packet of flow `hash` from `ingress` / upstream queue `uq`, assigned and
// enqueued on `egress` into a queue that held `queue_bytes`.
struct Sent {
  uint16_t q;
  BfcSignal signal;
  BfcTicket ticket;
};
Sent send(BfcShard& s, uint16_t egress, uint32_t hash, uint64_t now, uint16_t ingress = 0,
          uint16_t uq = kNoUpstreamQueue, uint64_t queue_bytes = 0, uint64_t paused_mask = 0) {
  Sent r{};
  r.ticket.ingress = ingress;
  r.ticket.upstream_queue = uq;
  r.q = s.assign(egress, hash, now, &r.ticket);
  r.signal = s.on_enqueued(egress, r.q, queue_bytes, paused_mask, now, &r.ticket);
  return r;
}

TEST(BfcShard, RejectsInconsistentSizes) {
  BfcShardConfig c = config();
  const std::array<uint64_t, 2> two = {k10G, k10G};
  c.rate_bps = two;
  EXPECT_THROW(BfcShard{c}, std::invalid_argument);
  c = config();
  c.queues_per_port = 65;
  EXPECT_THROW(BfcShard{c}, std::invalid_argument);
  c = config();
  const std::array<bool, 3> none = {false, false, false};
  c.egress_ports = none;
  EXPECT_THROW(BfcShard{c}, std::invalid_argument);
  c = config();
  const std::array<bool, 2> short_owned = {true, true};
  c.egress_ports = short_owned;
  EXPECT_THROW(BfcShard{c}, std::invalid_argument);
}

TEST(BfcShard, NewFlowsRotateThroughEmptyQueuesAndKeepTheirQueueWhileBusy) {
  BfcShard s(config());
  // Flow table index = hash mod 400 on egress 0 (the first slice).
  const Sent a = send(s, 0, 1, 0);
  const Sent b = send(s, 0, 2, 100);
  const Sent c = send(s, 0, 3, 200);
  EXPECT_EQ(a.q, 0);
  EXPECT_EQ(b.q, 1);
  EXPECT_EQ(c.q, 2);
  EXPECT_EQ(a.ticket.entry, 1u);
  EXPECT_EQ(c.ticket.entry, 3u);
  EXPECT_EQ(s.table().at(1).packets, 1u);
  EXPECT_EQ(s.assigner().empty_mask(0), 0b1000u);
  EXPECT_EQ(s.assigner().empty_mask(2), 0b1111u);  // other ports untouched

  // A again: its packet is still here, so it stays on 0 although the
  // rotating start is at 3 and queue 0 is busy.
  const Sent a2 = send(s, 0, 1, 300);
  EXPECT_EQ(a2.q, 0);
  EXPECT_EQ(s.table().at(1).packets, 2u);

  // Both of A's packets leave; the second empties queue 0 at t=1100.
  EXPECT_EQ(s.on_departure(0, 0, false, a.ticket, 1000), BfcSignal::kNone);
  EXPECT_EQ(s.on_departure(0, 0, true, a2.ticket, 1100), BfcSignal::kNone);
  EXPECT_EQ(s.table().at(1).packets, 0u);
  EXPECT_EQ(s.table().at(1).last_active_ns, 1100u);
  EXPECT_EQ(s.assigner().empty_mask(0), 0b1001u);

  // Within sticky_ns of its last departure A keeps queue 0 ...
  BfcTicket t;
  EXPECT_EQ(s.assign(0, 1, 1100 + kSticky - 1, &t), 0);
  // ... from 1100 + sticky on it is a new flow: first empty queue at or after
  // the rotating start (3, after C took 2), i.e. 3, not 0.
  const Sent a3 = send(s, 0, 1, 1100 + kSticky);
  EXPECT_EQ(a3.q, 3);
  EXPECT_EQ(s.table().at(1).queue, 3);
  // The start wrapped to 0: the next new flow gets the freed queue 0.
  const Sent d = send(s, 0, 4, 1100 + kSticky);
  EXPECT_EQ(d.q, 0);
  EXPECT_EQ(s.assigner().queue_collisions(), 0u);
}

TEST(BfcShard, FreedQueueIsTheOnlyChoiceWhenTheOthersAreBusy) {
  BfcShard s(config());
  Sent f[4];
  for (uint32_t i = 0; i < 4; ++i) f[i] = send(s, 0, 10 + i, i);
  for (uint32_t i = 0; i < 4; ++i) EXPECT_EQ(f[i].q, i);
  EXPECT_EQ(s.assigner().empty_mask(0), 0u);
  s.on_departure(0, 1, true, f[1].ticket, 50);
  // Start is back at 0, queue 0 is busy: the pick is 1.
  EXPECT_EQ(send(s, 0, 20, 60).q, 1);
  EXPECT_EQ(s.assigner().queue_collisions(), 0u);
}

TEST(BfcShard, NoEmptyQueueFallsBackToARandomQueueAndCountsACollision) {
  BfcShard s(config());
  for (uint32_t i = 0; i < 4; ++i) EXPECT_EQ(send(s, 0, 10 + i, i).q, i);
  EXPECT_EQ(s.assigner().queue_collisions(), 0u);
  const Sent e = send(s, 0, 30, 10);
  EXPECT_LT(e.q, kQueues);
  EXPECT_EQ(s.assigner().queue_collisions(), 1u);
  // Having packets here, it keeps that queue: no second draw, no collision.
  EXPECT_EQ(send(s, 0, 30, 20).q, e.q);
  EXPECT_EQ(s.assigner().queue_collisions(), 1u);
  // A second new flow draws again.
  EXPECT_LT(send(s, 0, 31, 30).q, kQueues);
  EXPECT_EQ(s.assigner().queue_collisions(), 2u);
}

// The flow table is indexed by egress port and hash (paper 3.3.1): flows of
// port 0 never lend their queue to a new flow of port 2.
TEST(BfcShard, FlowsOfAnotherPortNeverLendTheirQueue) {
  BfcShard s(config());
  // 1200 flows keep packets on port 0, whose queues are all in use.
  for (uint32_t h = 0; h < 1200; ++h) send(s, 0, h, h);
  const uint64_t collisions = s.table().index_collisions();
  // Port 2's queues are all empty: each new flow there gets the next one,
  // and none of them meets a port-0 flow in the table.
  for (uint32_t i = 0; i < kQueues; ++i) EXPECT_EQ(send(s, kEgress, 5000 + i, 2000).q, i) << i;
  EXPECT_EQ(s.table().index_collisions(), collisions);
  EXPECT_EQ(s.assigner().empty_mask(kEgress), 0u);
}

// assign() only decides: a packet the traffic manager then drops (so
// on_enqueued() is never called) leaves the table, the rotation and every
// counter as they were.
TEST(BfcShard, APacketDroppedAtAdmissionChangesNothing) {
  BfcShard s(config());
  BfcTicket t;
  EXPECT_EQ(s.assign(0, 1, 0, &t), 0);  // dropped
  EXPECT_FALSE(s.table().at(t.entry).used);
  EXPECT_EQ(s.table().occupied(), 0u);
  // The rotation did not move: the next new flows still start at queue 0.
  for (uint32_t i = 0; i < kQueues; ++i) EXPECT_EQ(send(s, 0, 2 + i, 10).q, i) << i;
  EXPECT_EQ(s.last_active_queues(0), kQueues);
  // Every queue is busy: a new flow's random pick, then dropped, is no queue collision.
  BfcTicket r;
  EXPECT_LT(s.assign(0, 30, 20, &r), kQueues);
  EXPECT_EQ(s.assigner().queue_collisions(), 0u);
  // Another flow's dropped packet on flow 2's busy entry is no index collision.
  const uint32_t shares = 2 + 400 * 1000;  // 2 mod 400, tag 6 (flow 2's is 0)
  BfcTicket c;
  s.assign(0, shares, 30, &c);
  EXPECT_EQ(c.entry, s.table().index(0, 2));
  EXPECT_EQ(s.table().index_collisions(), 0u);
  EXPECT_EQ(s.table().at(c.entry).packets, 1u);
  EXPECT_EQ(s.table().at(c.entry).last_active_ns, 10u);
}

// Index collisions count flows, not packets: a flow that shares another's
// busy entry counts once, however many packets it sends.
TEST(BfcShard, IndexCollisionCountedOncePerFlow) {
  BfcShard s(config());
  // Entry 1 of port 0 (hash mod 400), tags 0, 6 and 12.
  const uint32_t a = 1, b = 1 + 400 * 1000, c = 1 + 400 * 2000;
  std::vector<BfcTicket> held;
  for (uint64_t k = 0; k < 5; ++k) {
    held.push_back(send(s, 0, a, k).ticket);
    held.push_back(send(s, 0, b, k).ticket);
  }
  EXPECT_EQ(s.table().index_collisions(), 1u);  // b, once
  held.push_back(send(s, 0, c, 10).ticket);
  held.push_back(send(s, 0, a, 11).ticket);
  held.push_back(send(s, 0, c, 12).ticket);
  held.push_back(send(s, 0, b, 13).ticket);
  EXPECT_EQ(s.table().index_collisions(), 2u);  // and c, once
  for (const BfcTicket& t : held) s.on_departure(0, 0, false, t, 20);
  EXPECT_EQ(s.table().at(1).packets, 0u);
  // The entry emptied: b alone is no collision; a joining it again is a new one.
  send(s, 0, b, 30);
  EXPECT_EQ(s.table().index_collisions(), 2u);
  send(s, 0, a, 31);
  send(s, 0, a, 32);
  EXPECT_EQ(s.table().index_collisions(), 3u);
}

// Every part of a shard's state a later packet, the scraper or the summary
// can see, for one egress port.
void expect_same_state(const BfcShard& a, const BfcShard& b, uint16_t egress, int step) {
  EXPECT_EQ(a.assigner().empty_mask(egress), b.assigner().empty_mask(egress)) << step;
  EXPECT_EQ(a.assigner().queue_collisions(), b.assigner().queue_collisions()) << step;
  EXPECT_EQ(a.table().occupied(), b.table().occupied()) << step;
  EXPECT_EQ(a.table().index_collisions(), b.table().index_collisions()) << step;
  EXPECT_EQ(a.last_threshold(egress), b.last_threshold(egress)) << step;
  EXPECT_EQ(a.last_active_queues(egress), b.last_active_queues(egress)) << step;
  for (uint32_t i = 0; i < a.table().size(); ++i) {
    const FlowEntry& x = a.table().at(i);
    const FlowEntry& y = b.table().at(i);
    ASSERT_TRUE(x.used == y.used && x.queue == y.queue && x.packets == y.packets &&
                x.last_active_ns == y.last_active_ns && x.tag == y.tag && x.joined == y.joined)
        << "step " << step << ", entry " << i;
  }
}

// A packet that cuts through (real time) takes on_passed() where a queued
// one takes on_enqueued() into its empty queue and, at the same instant,
// on_departure(): both leave the shard alike. Flows come new, come back
// within the sticky time (kept) and after it, share entries with flows
// holding packets, with one queue paused by the downstream; a packet goes
// through only when its pick is an empty queue, as the traffic manager
// allows.
TEST(BfcShard, APassLeavesWhatAnEnqueueAndADepartureAtOnceWould) {
  BfcShard queued(config());
  BfcShard passed(config());
  // Queue 0 holds two packets of flow 1 (entry 1) on both shards.
  const Sent h1 = send(queued, kEgress, 1, 0, 0, 5);
  const Sent h2 = send(passed, kEgress, 1, 0, 0, 5);
  ASSERT_EQ(h1.q, 0);
  ASSERT_EQ(h2.q, 0);
  // Entry 10 saw two flows at once (an index collision), then emptied.
  for (BfcShard* s : {&queued, &passed}) {
    const Sent x = send(*s, kEgress, 10, 1);
    const Sent y = send(*s, kEgress, 10 + 400 * 3000, 2);
    s->on_departure(kEgress, x.q, false, x.ticket, 3);
    s->on_departure(kEgress, y.q, true, y.ticket, 4);
  }
  ASSERT_NE(passed.table().at(passed.table().index(kEgress, 10)).joined, 0u);
  constexpr uint64_t kPaused = 0b0100;  // queue 2
  // Hashes (most with a tag, hash >> 16, other than 0): new flows, flow C
  // again within and after kSticky, flows sharing flow 1's busy entry (1
  // mod 400), and a new flow in entry 10.
  constexpr uint32_t kC = 3 + 400 * 200;
  const uint32_t hashes[] = {
      2 + 400 * 300,  kC, 4 + 400 * 400, kC, 1 + 400 * 1000, 5, kC, 1 + 400 * 2000, 6 + 400 * 500,
      10 + 400 * 700, 9};
  uint64_t now = 100;
  int passes = 0;
  for (int step = 0; step < static_cast<int>(std::size(hashes)); ++step) {
    BfcTicket a, b;
    a.ingress = b.ingress = 0;
    a.upstream_queue = b.upstream_queue = 7;
    const uint16_t qa = queued.assign(kEgress, hashes[step], now, &a);
    const uint16_t qb = passed.assign(kEgress, hashes[step], now, &b);
    ASSERT_EQ(qa, qb) << step;
    if (((queued.assigner().empty_mask(kEgress) >> qa) & 1) != 0) {
      EXPECT_EQ(queued.on_enqueued(kEgress, qa, 0, kPaused, now, &a), BfcSignal::kNone);
      EXPECT_EQ(queued.on_departure(kEgress, qa, true, a, now), BfcSignal::kNone);
      EXPECT_EQ(passed.on_passed(kEgress, qb, kPaused, now, b), queued.last_threshold(kEgress));
      ++passes;
    }
    expect_same_state(queued, passed, kEgress, step);
    now += step == 3 ? kSticky : 1'000;
  }
  EXPECT_GE(passes, 8);
  EXPECT_EQ(passed.table().at(passed.table().index(kEgress, 1)).packets, 1u);  // still queued
  EXPECT_EQ(passed.counters().counter(0, 7), 0u);                              // nothing flagged
}

TEST(BfcShard, ThresholdIsHopBdpOverActiveQueues) {
  BfcShard s(config());
  // Nothing queued: N_active counts as 1.
  EXPECT_EQ(s.threshold(kEgress, 0), kTh1);
  const Sent a = send(s, kEgress, 1, 0);
  EXPECT_EQ(s.last_threshold(kEgress), kTh1);
  EXPECT_EQ(s.last_active_queues(kEgress), 1u);
  const Sent b = send(s, kEgress, 2, 10);
  EXPECT_EQ(b.q, 1);
  EXPECT_EQ(s.last_threshold(kEgress), kTh2);  // two active: 12500 / 2
  EXPECT_EQ(s.last_active_queues(kEgress), 2u);
  EXPECT_EQ(s.threshold(kEgress, 0), kTh2);

  // Queue 1 paused downstream: it no longer counts.
  send(s, kEgress, 1, 20, 0, kNoUpstreamQueue, 0, /*paused_mask=*/0b10);
  EXPECT_EQ(s.last_threshold(kEgress), kTh1);
  EXPECT_EQ(s.last_active_queues(kEgress), 1u);
  EXPECT_EQ(s.threshold(kEgress, 0b10), kTh1);
  // A paused bit on an empty queue removes nothing.
  EXPECT_EQ(s.threshold(kEgress, 0b1000), kTh2);
  // Every non-empty queue paused: N_active is at least 1.
  send(s, kEgress, 1, 30, 0, kNoUpstreamQueue, 0, 0b11);
  EXPECT_EQ(s.last_threshold(kEgress), kTh1);

  // A third flow takes queue 2: 12'500 / 3 = 4'166.67, rounded down.
  send(s, kEgress, 3, 40);
  EXPECT_EQ(s.last_active_queues(kEgress), 3u);
  EXPECT_EQ(s.last_threshold(kEgress), 4'166u);

  // Each egress port uses its own rate: port 1 at 25G, one queue: 31'250.
  send(s, 1, 1, 50);
  EXPECT_EQ(s.last_threshold(1), 31'250u);
  EXPECT_EQ(s.last_active_queues(1), 1u);
  EXPECT_EQ(s.last_threshold(kEgress), 4'166u);  // per port

  // The gauge is as of the last enqueue; threshold() is live.
  s.on_departure(kEgress, 0, false, a.ticket, 60);
  EXPECT_EQ(s.threshold(kEgress, 0), 4'166u);
  s.on_departure(kEgress, 1, true, b.ticket, 70);
  EXPECT_EQ(s.threshold(kEgress, 0), kTh2);
  EXPECT_EQ(s.last_threshold(kEgress), 4'166u);
}

TEST(BfcShard, FirstPacketAboveThPausesLastFlaggedDepartureResumes) {
  BfcShard s(config());
  // Into a queue of exactly Th: not longer than Th, not flagged.
  Sent p0 = send(s, kEgress, 1, 0, 0, 5, kTh1);
  EXPECT_EQ(p0.signal, BfcSignal::kNone);
  EXPECT_FALSE(p0.ticket.flagged);
  Sent p1 = send(s, kEgress, 1, 10, 0, 5, kTh1 + 1);
  EXPECT_EQ(p1.signal, BfcSignal::kPause);
  EXPECT_TRUE(p1.ticket.flagged);
  EXPECT_EQ(s.counters().counter(0, 5), 1u);
  EXPECT_EQ(s.counters().paused(0).word(0), uint64_t{1} << 5);
  Sent p2 = send(s, kEgress, 1, 20, 0, 5, 20'000);
  EXPECT_EQ(p2.signal, BfcSignal::kNone);  // 1 -> 2
  EXPECT_TRUE(p2.ticket.flagged);
  EXPECT_EQ(s.counters().counter(0, 5), 2u);
  EXPECT_EQ(s.counters().pauses_requested.get(), 1u);

  EXPECT_EQ(s.on_departure(kEgress, p0.q, false, p0.ticket, 30), BfcSignal::kNone);
  EXPECT_EQ(s.counters().counter(0, 5), 2u);  // unflagged: counter untouched
  EXPECT_EQ(s.on_departure(kEgress, p1.q, false, p1.ticket, 40), BfcSignal::kNone);
  EXPECT_EQ(s.counters().paused(0).word(0), uint64_t{1} << 5);
  EXPECT_EQ(s.on_departure(kEgress, p2.q, true, p2.ticket, 50), BfcSignal::kResume);
  EXPECT_EQ(s.counters().counter(0, 5), 0u);
  EXPECT_EQ(s.counters().paused(0).word(0), 0u);
  EXPECT_EQ(s.counters().resumes_requested.get(), 1u);
  EXPECT_EQ(s.counters().paused_upstream_queues.get(), 0u);
}

TEST(BfcShard, ThresholdShrinksWhenAnotherQueueFills) {
  BfcShard s(config());
  // 7000 bytes: under Th with one active queue (12'500), over it with two (6'250).
  EXPECT_FALSE(send(s, kEgress, 1, 0, 0, 2, 7'000).ticket.flagged);
  const Sent other = send(s, kEgress, 2, 10);  // flow 2 fills queue 1
  EXPECT_EQ(other.q, 1);
  // Queue 1 paused downstream: one active queue again.
  EXPECT_FALSE(send(s, kEgress, 1, 20, 0, 2, 7'000, 0b10).ticket.flagged);
  const Sent f = send(s, kEgress, 1, 30, 0, 2, 7'000);
  EXPECT_EQ(f.q, 0);
  EXPECT_TRUE(f.ticket.flagged);
  EXPECT_EQ(f.signal, BfcSignal::kPause);
}

// bfc.th (the paper's Fig. 7b sweep) replaces the hop RTT in Th only: the
// pause decision moves with it, sticky stays 2 x hop RTT.
TEST(BfcShard, ConfiguredThTimeReplacesHopRttInThOnly) {
  BfcShardConfig c = config();
  c.th_ns = 4'000;  // 4 us at 10 Gbit/s: 5'000 bytes for one active queue
  BfcShard s(c);
  EXPECT_EQ(s.th_ns(), 4'000u);
  EXPECT_EQ(s.hop_rtt_ns(), kHopRtt);
  EXPECT_EQ(s.threshold(kEgress, 0), 5'000u);
  EXPECT_EQ(s.threshold(1, 0), 12'500u);  // 25G host port: 4 us x 25e9 / 8
  // 6'000 bytes: under the default Th (12'500), over the configured one.
  const Sent f = send(s, kEgress, 1, 0, 0, 2, 6'000);
  EXPECT_EQ(s.last_threshold(kEgress), 5'000u);
  EXPECT_TRUE(f.ticket.flagged);
  EXPECT_EQ(f.signal, BfcSignal::kPause);
  // A second flow halves it, as the default does.
  send(s, kEgress, 2, 10);
  EXPECT_EQ(s.last_threshold(kEgress), 2'500u);
  // Sticky is untouched: flow 1 keeps queue 0 within 2 x hop RTT of its last
  // departure (not 2 x th).
  s.on_departure(kEgress, f.q, true, f.ticket, 100);
  EXPECT_EQ(send(s, kEgress, 1, 100 + 2 * 4'000 + 1).q, 0);

  // th_ns 0: the hop RTT, as before; larger than it: a larger Th.
  c.th_ns = 0;
  EXPECT_EQ(BfcShard(c).threshold(kEgress, 0), kTh1);
  EXPECT_EQ(BfcShard(c).th_ns(), kHopRtt);
  c.th_ns = 3 * kHopRtt;
  EXPECT_EQ(BfcShard(c).threshold(kEgress, 0), 3 * kTh1);
}

TEST(BfcShard, HostFacingNoUpstreamQueueAndElidedPairsNeverFlag) {
  BfcShard s(config());
  const uint64_t huge = 10 * kTh1;
  // From host-facing port 1, even with an upstream queue number.
  Sent h = send(s, kEgress, 1, 0, 1, 5, huge);
  EXPECT_EQ(h.signal, BfcSignal::kNone);
  EXPECT_FALSE(h.ticket.flagged);
  // Switch-facing port 0 without a shim.
  Sent n = send(s, kEgress, 2, 10, 0, kNoUpstreamQueue, huge);
  EXPECT_EQ(n.signal, BfcSignal::kNone);
  EXPECT_FALSE(n.ticket.flagged);
  // Elided (0 -> 2), but (0 -> 1) still flags.
  s.counters().elide_pair(0, kEgress);
  Sent e = send(s, kEgress, 3, 20, 0, 5, huge);
  EXPECT_EQ(e.signal, BfcSignal::kNone);
  EXPECT_FALSE(e.ticket.flagged);
  EXPECT_EQ(send(s, 1, 3, 30, 0, 5, 10 * 31'250).signal, BfcSignal::kPause);
  EXPECT_EQ(s.counters().pauses_requested.get(), 1u);
  EXPECT_EQ(s.counters().paused(1).word(0), 0u);
  // Their departures resume nothing.
  EXPECT_EQ(s.on_departure(kEgress, h.q, false, h.ticket, 40), BfcSignal::kNone);
  EXPECT_EQ(s.on_departure(kEgress, n.q, false, n.ticket, 40), BfcSignal::kNone);
  EXPECT_EQ(s.on_departure(kEgress, e.q, false, e.ticket, 40), BfcSignal::kNone);
  EXPECT_EQ(s.counters().counter(0, 5), 1u);
  EXPECT_EQ(s.counters().resumes_requested.get(), 0u);
}

// What a BFC_BITMAP built from the counters of ingress port 0 carries.
uint64_t bitmap_of(const BfcShard& s, uint16_t ingress) {
  const uint64_t words[1] = {s.counters().paused(ingress).word(0)};
  uint8_t buf[64];
  const MacAddr mac = {2, 0, 0, 0, 0, 1};
  const uint32_t len = build_bfc_bitmap(buf, sizeof buf, mac, mac, 0, words, 64);
  EXPECT_GT(len, 0u);
  ControlMessage m{};
  EXPECT_EQ(parse_control(buf + 14, len - 14, &m), ControlParseResult::kOk);
  uint64_t out = 0;
  for (uint32_t q = 0; q < 64; ++q)
    if (m.queue_paused(q)) out |= uint64_t{1} << q;
  return out;
}

// One flow of 1500-byte packets from upstream queue 3 of ingress 0 into a
// FIFO modelled here; one active queue, so Th = 12'500.
TEST(BfcShard, QueueModelPausesAboveThAndResumesWhenTheLastFlaggedLeaves) {
  BfcShard s(config());
  constexpr uint64_t kPkt = 1500;
  std::deque<BfcTicket> fifo;
  uint64_t bytes = 0;
  uint64_t now = 0;
  int pauses = 0, resumes = 0;
  uint16_t q = 0;
  auto enqueue = [&]() -> BfcSignal {
    BfcTicket t;
    t.ingress = 0;
    t.upstream_queue = 3;
    q = s.assign(kEgress, 77, now, &t);
    const BfcSignal sig = s.on_enqueued(kEgress, q, bytes, 0, now, &t);
    bytes += kPkt;
    fifo.push_back(t);
    now += 100;
    if (sig == BfcSignal::kPause) ++pauses;
    return sig;
  };
  auto dequeue = [&]() -> BfcSignal {
    const BfcTicket t = fifo.front();
    fifo.pop_front();
    bytes -= kPkt;
    const BfcSignal sig = s.on_departure(kEgress, q, fifo.empty(), t, now);
    now += 100;
    if (sig == BfcSignal::kResume) ++resumes;
    return sig;
  };

  // Packet k finds 1500 k bytes: 8 x 1500 = 12'000 <= Th, 9 x 1500 = 13'500 > Th.
  for (int k = 0; k < 9; ++k) EXPECT_EQ(enqueue(), BfcSignal::kNone) << k;
  EXPECT_EQ(s.counters().paused(0).word(0), 0u);
  EXPECT_EQ(bitmap_of(s, 0), 0u);
  EXPECT_EQ(enqueue(), BfcSignal::kPause);  // packet 9
  EXPECT_EQ(bitmap_of(s, 0), uint64_t{1} << 3);
  for (int k = 10; k < 15; ++k) EXPECT_EQ(enqueue(), BfcSignal::kNone) << k;
  EXPECT_EQ(s.counters().counter(0, 3), 6u);  // packets 9..14
  for (size_t i = 0; i < fifo.size(); ++i) EXPECT_EQ(fifo[i].flagged, i >= 9) << i;

  // Drain packets 0..9: the first flagged one leaving resumes nothing.
  for (int k = 0; k < 10; ++k) EXPECT_EQ(dequeue(), BfcSignal::kNone) << k;
  EXPECT_EQ(s.counters().counter(0, 3), 5u);
  EXPECT_EQ(bytes, 5 * kPkt);
  // Packet 15 finds 7'500 bytes: not flagged although the queue is paused upstream.
  EXPECT_EQ(enqueue(), BfcSignal::kNone);
  EXPECT_FALSE(fifo.back().flagged);
  for (int k = 10; k < 14; ++k) EXPECT_EQ(dequeue(), BfcSignal::kNone) << k;
  EXPECT_EQ(bitmap_of(s, 0), uint64_t{1} << 3);
  // Packet 14, the last flagged one, leaves while packet 15 is still queued.
  EXPECT_EQ(dequeue(), BfcSignal::kResume);
  EXPECT_EQ(fifo.size(), 1u);
  EXPECT_EQ(s.counters().paused(0).word(0), 0u);
  EXPECT_EQ(bitmap_of(s, 0), 0u);
  EXPECT_EQ(dequeue(), BfcSignal::kNone);
  EXPECT_EQ(s.assigner().empty_mask(kEgress), 0b1111u);
  EXPECT_EQ(s.table().occupied(), 0u);
  EXPECT_EQ(pauses, 1);
  EXPECT_EQ(resumes, 1);
}

TEST(BfcShard, StochasticIsHashModQueuesWhateverIsEmpty) {
  BfcShard s(config(BfcAssignment::kStochastic));
  EXPECT_EQ(send(s, kEgress, 5, 0).q, 1);   // fills queue 1
  EXPECT_EQ(send(s, kEgress, 9, 10).q, 1);  // 9 mod 4, queue 1 busy, 0/2/3 empty
  EXPECT_EQ(send(s, kEgress, 6, 20).q, 2);
  EXPECT_EQ(send(s, kEgress, 8, 30).q, 0);
  EXPECT_EQ(send(s, kEgress, 7, 40).q, 3);
  // Long idle, still the same queue.
  EXPECT_EQ(send(s, kEgress, 5, 1'000'000'000).q, 1);
  EXPECT_EQ(send(s, kEgress, 0xFFFFFFFF, 50).q, 3);
  EXPECT_EQ(s.assigner().queue_collisions(), 0u);
}

TEST(BfcShard, SingleIsAlwaysQueueZero) {
  BfcShard s(config(BfcAssignment::kSingle));
  for (uint32_t h = 0; h < 8; ++h) EXPECT_EQ(send(s, kEgress, h * 12345 + 1, h).q, 0) << h;
  EXPECT_EQ(s.assigner().empty_mask(kEgress), 0b1110u);
  EXPECT_EQ(s.last_active_queues(kEgress), 1u);
  EXPECT_EQ(s.last_threshold(kEgress), kTh1);
  EXPECT_EQ(s.assigner().queue_collisions(), 0u);
}

}  // namespace
}  // namespace sluice
