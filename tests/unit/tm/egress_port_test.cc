#include "lib/tm/egress_port.h"

#include <gtest/gtest.h>

#include <random>
#include <stdexcept>
#include <vector>

namespace sluice {
namespace {

TmPacket packet(uint32_t bytes, uint16_t aux = 0) {
  TmPacket p;
  p.bytes = bytes;
  p.aux = aux;
  return p;
}

EgressPortConfig small_config() {
  EgressPortConfig cfg;
  cfg.num_queues = 4;
  cfg.queue_capacity = 64;
  cfg.control_capacity = 4;
  return cfg;
}

// RED from an empty queue: its coin is drawn for every packet, marked or not.
void red_from_empty(EgressPortConfig& cfg) {
  cfg.ecn.mode = EcnMode::kRed;
  cfg.ecn.red_min_bytes = 0;
  cfg.ecn.red_max_bytes = 2000;
  cfg.ecn.red_pmax = 0.5;
}

std::vector<TmPacket> take(EgressPort& port, uint64_t now, unsigned max = 64) {
  std::vector<TmPacket> out(max);
  out.resize(port.dequeue_burst(now, out.data(), max));
  return out;
}

TEST(EgressPort, RejectsBadQueueCounts) {
  SharedBuffer buffer(1 << 20, 1.0);
  EgressPortConfig cfg;
  cfg.num_queues = 0;
  EXPECT_THROW(EgressPort(cfg, &buffer), std::invalid_argument);
  cfg.num_queues = 65;
  EXPECT_THROW(EgressPort(cfg, &buffer), std::invalid_argument);
  cfg.num_queues = 64;
  EgressPort ok(cfg, &buffer);
  EXPECT_EQ(ok.num_queues(), 64u);
}

TEST(EgressPort, EnqueueSetsQueueAndTimeAndCarriesAux) {
  SharedBuffer buffer(1 << 20, 1.0);
  EgressPort port(small_config(), &buffer);
  EnqueueResult r = port.enqueue(1234, 2, packet(500, 77), false);
  EXPECT_EQ(r.verdict, EnqueueVerdict::kEnqueued);
  EXPECT_EQ(buffer.used(), 500u);
  EXPECT_EQ(port.queue_bytes(2), 500u);
  auto out = take(port, 2000);
  ASSERT_EQ(out.size(), 1u);
  EXPECT_EQ(out[0].queue, 2);
  EXPECT_EQ(out[0].aux, 77);
  EXPECT_EQ(out[0].enqueue_ns, 1234u);
  EXPECT_EQ(buffer.used(), 0u);
  EXPECT_EQ(port.queue_stats(2).enqueued_packets.get(), 1u);
  EXPECT_EQ(port.queue_stats(2).dequeued_bytes.get(), 500u);
}

// The priority queue (replies) sends runs of several packets before any
// data, with no deficit to spend; then DRR goes on among the data queues.
TEST(EgressPort, PriorityLastSendsItsRunsFirst) {
  SharedBuffer buffer(1 << 20, 1.0);
  EgressPortConfig cfg = small_config();
  cfg.num_queues = 3;
  cfg.priority_last = true;
  EgressPort port(cfg, &buffer);
  for (uint16_t i = 0; i < 4; ++i) {
    ASSERT_NE(port.enqueue(0, 0, packet(1000, i), false).verdict, EnqueueVerdict::kDropped);
    ASSERT_NE(port.enqueue(0, 2, packet(64, 100 + i), false).verdict, EnqueueVerdict::kDropped);
  }
  const std::vector<TmPacket> out = take(port, 0, 6);
  ASSERT_EQ(out.size(), 6u);
  for (int i = 0; i < 4; ++i) EXPECT_EQ(out[i].queue, 2u) << i;
  EXPECT_EQ(out[4].queue, 0u);
  EXPECT_EQ(port.queue_stats(2).dequeued_packets.get(), 4u);
}

TEST(EgressPort, QueueFullAfterRoundedCapacity) {
  SharedBuffer buffer(1 << 20, 64.0);
  EgressPortConfig cfg = small_config();
  cfg.queue_capacity = 5;  // rounds up to 8
  EgressPort port(cfg, &buffer);
  for (int i = 0; i < 8; ++i)
    ASSERT_EQ(port.enqueue(0, 1, packet(100), false).verdict, EnqueueVerdict::kEnqueued);
  EnqueueResult r = port.enqueue(0, 1, packet(100), false);
  EXPECT_EQ(r.verdict, EnqueueVerdict::kDropped);
  EXPECT_EQ(r.reason, DropReason::kQueueFull);
  EXPECT_EQ(port.queue_stats(1).drops[static_cast<unsigned>(DropReason::kQueueFull)].get(), 1u);
  EXPECT_EQ(buffer.used(), 800u);  // the refused packet was not charged
}

TEST(EgressPort, BufferAdmissionReasonsAreCounted) {
  SharedBuffer buffer(1000, 1.0);
  EgressPort port(small_config(), &buffer);
  // q0: 400 + 100 > 1 x (1000 - 400) is false, 500 + 100 > 500 is true.
  for (int i = 0; i < 5; ++i)
    ASSERT_EQ(port.enqueue(0, 0, packet(100), false).verdict, EnqueueVerdict::kEnqueued);
  EXPECT_EQ(port.enqueue(0, 0, packet(100), false).reason, DropReason::kQueueThreshold);
  // q1 may take 250 (threshold 500); then 250 left, and a 300-byte frame cannot fit.
  EXPECT_EQ(port.enqueue(0, 1, packet(250), false).verdict, EnqueueVerdict::kEnqueued);
  EXPECT_EQ(port.enqueue(0, 2, packet(300), false).reason, DropReason::kBufferFull);
  EXPECT_EQ(port.queue_stats(0).drops[static_cast<unsigned>(DropReason::kQueueThreshold)].get(),
            1u);
  EXPECT_EQ(port.queue_stats(2).drops[static_cast<unsigned>(DropReason::kBufferFull)].get(), 1u);
}

// A packet the switch already holds elsewhere in the buffer (a Floodgate
// VOQ) moves into a queue without a second admission test: only the ring's
// capacity refuses it, and the buffer is charged as for any packet.
TEST(EgressPort, HeldPacketsSkipBufferAdmissionButNotTheRing) {
  SharedBuffer buffer(1000, 1.0);
  EgressPort port(small_config(), &buffer);
  for (int i = 0; i < 5; ++i)
    ASSERT_EQ(port.enqueue(0, 0, packet(100), false).verdict, EnqueueVerdict::kEnqueued);
  ASSERT_EQ(port.enqueue(0, 0, packet(100), false).reason, DropReason::kQueueThreshold);
  EXPECT_EQ(port.enqueue_held(0, 0, packet(100), false).verdict, EnqueueVerdict::kEnqueued);
  EXPECT_EQ(buffer.used(), 600u);
  EXPECT_EQ(port.queue_bytes(0), 600u);
  // The ring holds 64 packets (queue 1 is empty).
  SharedBuffer big(1 << 20, 1.0);
  EgressPort ring(small_config(), &big);
  unsigned taken = 0;
  while (ring.enqueue_held(0, 1, packet(64), false).verdict == EnqueueVerdict::kEnqueued) ++taken;
  EXPECT_EQ(taken, 64u);
  EXPECT_EQ(ring.queue_stats(1).drops[static_cast<unsigned>(DropReason::kQueueFull)].get(), 1u);
}

TEST(EgressPort, EcnStepMarksOnArrivalQueue) {
  SharedBuffer buffer(1 << 20, 8.0);
  EgressPortConfig cfg = small_config();
  cfg.ecn.mode = EcnMode::kStep;
  cfg.ecn.step_k_bytes = 3000;
  EgressPort port(cfg, &buffer);
  // Arrivals find 0, 1000, 2000, 3000, 4000, 5000 bytes: the 5th and 6th are marked.
  std::vector<EnqueueVerdict> v;
  for (int i = 0; i < 6; ++i) v.push_back(port.enqueue(0, 3, packet(1000), true).verdict);
  EXPECT_EQ(v, (std::vector<EnqueueVerdict>{EnqueueVerdict::kEnqueued, EnqueueVerdict::kEnqueued,
                                            EnqueueVerdict::kEnqueued, EnqueueVerdict::kEnqueued,
                                            EnqueueVerdict::kEnqueuedMarked,
                                            EnqueueVerdict::kEnqueuedMarked}));
  EXPECT_EQ(port.enqueue(0, 3, packet(1000), false).verdict, EnqueueVerdict::kEnqueued);  // not ECT
  EXPECT_EQ(port.queue_stats(3).ecn_marks.get(), 2u);
  EXPECT_EQ(port.ecn_marks(), 2u);
  // The per-queue length counts: another queue is below K.
  EXPECT_EQ(port.enqueue(0, 0, packet(1000), true).verdict, EnqueueVerdict::kEnqueued);
}

TEST(EgressPort, ResidenceTimeIsDequeueMinusEnqueue) {
  SharedBuffer buffer(1 << 20, 1.0);
  EgressPort port(small_config(), &buffer);
  port.enqueue(1000, 0, packet(100), false);
  port.enqueue(1100, 0, packet(100), false);
  auto out = take(port, 1350);
  ASSERT_EQ(out.size(), 2u);
  const LatencyHistogram& h = port.residence();
  EXPECT_EQ(h.total(), 2u);
  EXPECT_EQ(h.sum_ns(), 350u + 250u);
  EXPECT_EQ(h.count(2), 2u);  // 350 and 250 are both in (200, 400]
}

TEST(EgressPort, ControlFirstNotChargedAndBounded) {
  SharedBuffer buffer(1 << 20, 1.0);
  EgressPort port(small_config(), &buffer);
  port.enqueue(0, 3, packet(1000), false);
  for (int i = 0; i < 4; ++i) EXPECT_TRUE(port.enqueue_control(0, packet(64, i)));
  EXPECT_FALSE(port.enqueue_control(0, packet(64)));
  EXPECT_EQ(port.control_dropped.get(), 1u);
  EXPECT_EQ(buffer.used(), 1000u);
  EXPECT_EQ(port.queued_bytes(), 1000u + 4 * 64);
  EXPECT_EQ(port.queued_packets(), 5u);
  auto out = take(port, 10);
  ASSERT_EQ(out.size(), 5u);
  for (int i = 0; i < 4; ++i) {
    EXPECT_EQ(out[i].queue, kControlQueue);
    EXPECT_EQ(out[i].aux, i);
  }
  EXPECT_EQ(out[4].queue, 3);
  EXPECT_EQ(port.control_sent.get(), 4u);
  EXPECT_EQ(port.residence().total(), 1u);  // only data is measured
}

TEST(EgressPort, PausedQueueKeepsPacketsAndIsSkipped) {
  SharedBuffer buffer(1 << 20, 1.0);
  EgressPort port(small_config(), &buffer);
  for (int i = 0; i < 3; ++i) {
    port.enqueue(0, 0, packet(100), false);
    port.enqueue(0, 1, packet(100), false);
  }
  port.pause_queue(1, UINT64_MAX);
  EXPECT_TRUE(port.queue_paused(1, 1'000'000));
  auto out = take(port, 10);
  ASSERT_EQ(out.size(), 3u);
  for (const TmPacket& p : out) EXPECT_EQ(p.queue, 0);
  EXPECT_EQ(port.queue_bytes(1), 300u);
  EXPECT_TRUE(take(port, 20).empty());
  EXPECT_EQ(port.next_event_ns(20), UINT64_MAX);
  port.resume_queue(1);
  EXPECT_FALSE(port.queue_paused(1, 30));
  EXPECT_EQ(port.next_event_ns(30), 30u);
  EXPECT_EQ(take(port, 30).size(), 3u);
  EXPECT_EQ(port.queued_packets(), 0u);
  EXPECT_EQ(port.next_event_ns(40), UINT64_MAX);
}

TEST(EgressPort, PauseExpires) {
  SharedBuffer buffer(1 << 20, 1.0);
  EgressPort port(small_config(), &buffer);
  port.enqueue(0, 2, packet(100), false);
  port.pause_queue(2, 5000);
  EXPECT_TRUE(take(port, 1000).empty());
  EXPECT_EQ(port.next_event_ns(1000), 5000u);
  EXPECT_TRUE(take(port, 4999).empty());
  EXPECT_FALSE(port.queue_paused(2, 5000));
  EXPECT_EQ(take(port, 5000).size(), 1u);
  // A refreshed pause replaces the end time.
  port.enqueue(6000, 2, packet(100), false);
  port.pause_queue(2, 7000);
  port.pause_queue(2, 9000);
  EXPECT_TRUE(take(port, 8000).empty());
  EXPECT_EQ(port.next_event_ns(8000), 9000u);
  EXPECT_EQ(take(port, 9000).size(), 1u);
}

TEST(EgressPort, PortPauseStopsDataButNotControl) {
  SharedBuffer buffer(1 << 20, 1.0);
  EgressPort port(small_config(), &buffer);
  port.enqueue(0, 0, packet(100), false);
  port.enqueue_control(0, packet(64));
  port.pause_port(10'000);
  EXPECT_TRUE(port.port_paused(9'999));
  auto out = take(port, 100);
  ASSERT_EQ(out.size(), 1u);
  EXPECT_EQ(out[0].queue, kControlQueue);
  EXPECT_EQ(port.next_event_ns(100), 10'000u);
  EXPECT_TRUE(take(port, 9'999).empty());
  EXPECT_EQ(take(port, 10'000).size(), 1u);

  port.enqueue(20'000, 0, packet(100), false);
  port.pause_port(UINT64_MAX);
  EXPECT_TRUE(take(port, 30'000).empty());
  EXPECT_EQ(port.next_event_ns(30'000), UINT64_MAX);
  port.resume_port();
  EXPECT_FALSE(port.port_paused(30'000));
  EXPECT_EQ(take(port, 30'000).size(), 1u);
}

TEST(EgressPort, ShaperPacesTheBurst) {
  SharedBuffer buffer(1 << 20, 8.0);
  EgressPortConfig cfg = small_config();
  cfg.rate_bps = 10'000'000'000;  // 0.8 ns per byte
  cfg.burst_bytes = 16384;
  EgressPort port(cfg, &buffer);
  for (int i = 0; i < 40; ++i) port.enqueue(0, 0, packet(1000), false);  // 1024 wire bytes each
  // A full bucket lets 16 frames reach 0 tokens, then a 17th go.
  EXPECT_EQ(take(port, 0).size(), 17u);
  // 1024 bytes owed = 819.2 ns.
  EXPECT_EQ(port.next_event_ns(0), 820u);
  EXPECT_TRUE(take(port, 819).empty());
  EXPECT_EQ(take(port, 820).size(), 1u);
  EXPECT_EQ(port.shaper().burst_bytes(), 16384u);
}

// The worker skips the dequeue of a port that holds nothing. Two shaped
// ports get the same random arrivals (data and control), pauses and
// dequeue times; one is asked every time, the other only when it holds
// something. Wherever the second was skipped the first gave nothing, and
// every dequeue gives both the same frames, tokens and lost time.
TEST(EgressPort, HoldsNothingIsWhenDequeueGivesNothing) {
  SharedBuffer buffer_a(1 << 20, 8.0), buffer_b(1 << 20, 8.0);
  EgressPortConfig cfg = small_config();
  cfg.rate_bps = 10'000'000'000;
  cfg.burst_bytes = 4096;
  EgressPort a(cfg, &buffer_a), b(cfg, &buffer_b);
  EXPECT_TRUE(b.holds_nothing());
  std::mt19937_64 rng(7);
  uint64_t now = 0;
  unsigned skipped = 0, given = 0;
  for (int step = 0; step < 20'000; ++step) {
    now += rng() % 3000;
    const unsigned what = rng() % 16;
    if (what < 3) {
      const uint16_t q = static_cast<uint16_t>(rng() % 4);
      const uint32_t bytes = 64 + static_cast<uint32_t>(rng() % 1400);
      ASSERT_EQ(a.enqueue(now, q, packet(bytes), false).verdict,
                b.enqueue(now, q, packet(bytes), false).verdict);
    } else if (what == 3) {
      ASSERT_EQ(a.enqueue_control(now, packet(64)), b.enqueue_control(now, packet(64)));
    } else if (what == 4) {
      const uint16_t q = static_cast<uint16_t>(rng() % 4);
      const uint64_t until = now + rng() % 20'000;
      a.pause_queue(q, until);
      b.pause_queue(q, until);
    }
    const unsigned max = 1 + static_cast<unsigned>(rng() % 8);
    const std::vector<TmPacket> from_a = take(a, now, max);
    if (b.holds_nothing()) {
      ASSERT_TRUE(from_a.empty()) << "step " << step;
      ++skipped;
      continue;
    }
    const std::vector<TmPacket> from_b = take(b, now, max);
    ASSERT_EQ(from_a.size(), from_b.size()) << "step " << step;
    for (size_t i = 0; i < from_a.size(); ++i) {
      ASSERT_EQ(from_a[i].bytes, from_b[i].bytes);
      ASSERT_EQ(from_a[i].queue, from_b[i].queue);
      ASSERT_EQ(from_a[i].enqueue_ns, from_b[i].enqueue_ns);
    }
    ASSERT_EQ(a.shaper_lost_ns(), b.shaper_lost_ns()) << "step " << step;
    given += static_cast<unsigned>(from_b.size());
  }
  EXPECT_GT(skipped, 1000u);  // the ports were often empty
  EXPECT_GT(given, 1000u);
}

TEST(EgressPort, DefaultBurstIsTenMicroseconds) {
  EXPECT_EQ(default_burst_bytes(1'000'000'000), 16384u);      // 1250 B < 16 KiB
  EXPECT_EQ(default_burst_bytes(100'000'000'000), 125'000u);  // 100 Gb/s x 10 us / 8
}

TEST(EgressPort, DrainReturnsEverythingAndReleasesBuffer) {
  SharedBuffer buffer(1 << 20, 1.0);
  EgressPort port(small_config(), &buffer);
  uint64_t total = 0;
  for (uint16_t q = 0; q < 4; ++q) {
    for (int i = 0; i < 3; ++i) {
      port.enqueue(0, q, packet(100 + q), false);
      total += 100 + q;
    }
  }
  port.enqueue_control(0, packet(64));
  port.pause_queue(2, UINT64_MAX);
  uint64_t seen_bytes = 0;
  int seen = 0;
  port.drain([&](const TmPacket& p) {
    seen_bytes += p.bytes;
    ++seen;
  });
  EXPECT_EQ(seen, 13);
  EXPECT_EQ(seen_bytes, total + 64);
  EXPECT_EQ(buffer.used(), 0u);
  EXPECT_EQ(port.queued_bytes(), 0u);
  EXPECT_EQ(port.queued_packets(), 0u);
  EXPECT_EQ(port.next_event_ns(0), UINT64_MAX);
  // Still usable afterwards.
  port.enqueue(1, 0, packet(100), false);
  EXPECT_EQ(take(port, 2).size(), 1u);
}

TEST(EgressPort, SharedBufferAcrossPorts) {
  SharedBuffer buffer(1000, 1.0);
  EgressPort a(small_config(), &buffer);
  EgressPort b(small_config(), &buffer);
  EXPECT_EQ(a.enqueue(0, 0, packet(400), false).verdict, EnqueueVerdict::kEnqueued);
  // b's queue: threshold is 1 x (1000 - 400) = 600.
  EXPECT_EQ(b.enqueue(0, 0, packet(500), false).verdict, EnqueueVerdict::kEnqueued);
  EXPECT_EQ(buffer.used(), 900u);
  EXPECT_EQ(b.enqueue(0, 1, packet(200), false).reason, DropReason::kBufferFull);
}

// One data queue at `rate_bps` (0: unshaped), with room for long backlogs:
// the port the fidelity tests below drive with a late or bursty caller.
EgressPortConfig one_queue_config(uint64_t rate_bps) {
  EgressPortConfig c;
  c.num_queues = 1;
  c.queue_capacity = 1 << 16;
  c.rate_bps = rate_bps;
  return c;
}

// A caller that comes back late loses transmit time only beyond the bucket,
// and only while frames wait; the port reports exactly that loss.
TEST(EgressPortFidelity, ShaperLostTimeCountsOnlyBackloggedOverflow) {
  SharedBuffer buf(1 << 30, 8.0);
  EgressPortConfig c = one_queue_config(1'000'000'000);  // 1 Gbps: 1 byte = 8 ns
  c.burst_bytes = 1000;                                  // 8 us of tokens
  c.wire_overhead_bytes = 0;
  EgressPort p(c, &buf);
  TmPacket t;
  t.bytes = 1000;
  TmPacket out[64];
  // Idle for 1 ms: the bucket overflows but nothing waits, so nothing is lost.
  EXPECT_EQ(p.dequeue_burst(1'000'000, out, 64), 0u);
  EXPECT_EQ(p.shaper_lost_ns(), 0u);
  for (int i = 0; i < 50; ++i) p.enqueue(1'000'000, 0, t, false);
  // The full bucket sends one frame, and the next may go on the deficit: tokens
  // go to 8000 ns - 2 x 8000 ns = -8000 ns.
  EXPECT_EQ(p.dequeue_burst(1'000'000, out, 2), 2u);
  // Back 100 us later: 8 us repay the deficit, 8 us fill the bucket, the
  // remaining 84 us are lost while 48 frames wait.
  p.dequeue_burst(1'100'000, out, 1);
  EXPECT_EQ(p.shaper_lost_ns(), 84'000u);
}

TEST(EgressPortFidelity, FirstDequeueAtALateClockLosesNothing) {
  SharedBuffer buf(1 << 20, 1.0);
  EgressPort p(one_queue_config(10'000'000'000ull), &buf);
  TmPacket t;
  t.bytes = 100;
  p.enqueue(5'000'000'000'000ull, 0, t, false);  // a TSC-based clock is far from 0
  TmPacket out[4];
  EXPECT_EQ(p.dequeue_burst(5'000'000'000'000ull, out, 4), 1u);
  EXPECT_EQ(p.shaper_lost_ns(), 0u);
}

// An unshaped port (an internal link paces itself) that its caller serves a
// few frames at a time keeps frames waiting between calls; that is the link
// being busy, not time lost. It once counted every gap between calls as lost.
TEST(EgressPortFidelity, UnshapedPortServedInSmallBurstsLosesNothing) {
  SharedBuffer buf(1 << 30, 8.0);
  EgressPort p(one_queue_config(0), &buf);
  TmPacket t;
  t.bytes = 1500;
  for (int i = 0; i < 100; ++i) p.enqueue(1'000'000, 0, t, false);
  TmPacket out[4];
  for (uint64_t now = 1'000'000; now < 1'000'000 + 50 * 300'000; now += 300'000) {
    EXPECT_EQ(p.dequeue_burst(now, out, 2), 2u);
  }
  EXPECT_EQ(p.shaper_lost_ns(), 0u);
}

}  // namespace
}  // namespace sluice

namespace sluice {
namespace {

// TCD's view of the pauses (lib/mechanisms/tcd/tcd_port.h): which queues are paused
// at an instant, before the dequeue has expired anything, and when a pause
// ended.
TEST(EgressPort, PausedQueuesCountsQueueAndPortPausesUntilTheyEnd) {
  SharedBuffer buf(1 << 20, 1.0);
  EgressPort port(small_config(), &buf);
  EXPECT_EQ(port.paused_queues(0), 0u);
  port.pause_queue(2, 1'000);
  EXPECT_EQ(port.paused_queues(999), 0b0100u);
  EXPECT_EQ(port.paused_queues(1'000), 0u);  // expired, though nothing dequeued
  EXPECT_EQ(port.pause_ended_ns(2, 999, 1'500), 1'000u);
  port.pause_port(3'000);
  EXPECT_EQ(port.paused_queues(2'000), 0b1111u);  // every data queue of the four
  EXPECT_EQ(port.pause_ended_ns(0, 2'000, 3'200), 3'000u);
  port.pause_queue(1, UINT64_MAX);  // BFC: until resumed
  EXPECT_EQ(port.paused_queues(5'000), 0b0010u);
  port.resume_queue(1);
  EXPECT_EQ(port.paused_queues(5'001), 0u);
  // Resumed by a frame: now, not the port pause that ended before it was seen.
  EXPECT_EQ(port.pause_ended_ns(1, 5'000, 5'001), 5'001u);
}

// Two ports that should have counted the same: every queue's counts,
// marks and drops, and the residence histogram. (Call through
// ASSERT_NO_FATAL_FAILURE.)
void expect_same_counts(const EgressPort& a, const EgressPort& b) {
  for (uint16_t i = 0; i < a.num_queues(); ++i) {
    const QueueStats &sa = a.queue_stats(i), &sb = b.queue_stats(i);
    ASSERT_EQ(sa.enqueued_packets.get(), sb.enqueued_packets.get());
    ASSERT_EQ(sa.enqueued_bytes.get(), sb.enqueued_bytes.get());
    ASSERT_EQ(sa.dequeued_packets.get(), sb.dequeued_packets.get());
    ASSERT_EQ(sa.dequeued_bytes.get(), sb.dequeued_bytes.get());
    ASSERT_EQ(sa.ecn_marks.get(), sb.ecn_marks.get());
    for (unsigned d = 0; d < kDropReasonCount; ++d) ASSERT_EQ(sa.drops[d].get(), sb.drops[d].get());
  }
  ASSERT_EQ(a.residence().total(), b.residence().total());
  ASSERT_EQ(a.residence().sum_ns(), b.residence().sum_ns());
  for (unsigned i = 0; i < LatencyHistogram::bucket_count(); ++i)
    ASSERT_EQ(a.residence().count(i), b.residence().count(i));
}

// pass() is enqueue() followed at once by a dequeue_burst() that takes the
// packet: two ports fed the same arrivals, pauses and dequeues, one passing
// each packet it may (can_cut) and the other queueing it and taking it
// out, keep the same counts, buffer, residence histogram, marks (RED draws
// its coin either way) and scheduler round, so that what they queue
// afterwards leaves in the same order.
TEST(EgressPort, PassIsEnqueueThenDequeue) {
  for (SchedulerKind kind : {SchedulerKind::kDrr, SchedulerKind::kStrictPriority}) {
    SharedBuffer buffer_a(1 << 16, 1.0), buffer_b(1 << 16, 1.0);
    EgressPortConfig cfg = small_config();
    cfg.scheduler = kind;
    cfg.drr_quantum_bytes = 700;
    red_from_empty(cfg);
    EgressPort a(cfg, &buffer_a), b(cfg, &buffer_b);
    std::mt19937_64 rng(5);
    uint64_t now = 0;
    unsigned passed = 0;
    for (int step = 0; step < 20000; ++step) {
      now += rng() % 50;
      const unsigned op = static_cast<unsigned>(rng() % 10);
      const uint16_t q = static_cast<uint16_t>(rng() % 4);
      if (op < 4) {
        const TmPacket p =
            packet(64 + static_cast<uint32_t>(rng() % 1400), static_cast<uint16_t>(step));
        const bool ect = rng() % 2 == 0;
        if (b.can_cut(now, q)) {
          ++passed;
          const EnqueueResult rb = b.pass(q, p, ect);
          const EnqueueResult ra = a.enqueue(now, q, p, ect);
          ASSERT_EQ(ra.verdict, rb.verdict);
          ASSERT_EQ(ra.reason, rb.reason);
          if (ra.verdict != EnqueueVerdict::kDropped) {
            const std::vector<TmPacket> out = take(a, now, 1);
            ASSERT_EQ(out.size(), 1u);  // the reference takes the same packet at once
            ASSERT_EQ(out[0].aux, p.aux);
          }
        } else {
          ASSERT_EQ(a.enqueue(now, q, p, ect).verdict, b.enqueue(now, q, p, ect).verdict);
        }
      } else if (op < 9) {
        const unsigned max = 1 + static_cast<unsigned>(rng() % 3);
        const std::vector<TmPacket> oa = take(a, now, max), ob = take(b, now, max);
        ASSERT_EQ(oa.size(), ob.size());
        for (size_t i = 0; i < oa.size(); ++i) ASSERT_EQ(oa[i].aux, ob[i].aux);
      } else if (rng() % 2 == 0) {
        const uint64_t until = now + rng() % 300;
        a.pause_queue(q, until);
        b.pause_queue(q, until);
      } else {
        a.resume_queue(q);
        b.resume_queue(q);
      }
      ASSERT_EQ(buffer_a.used(), buffer_b.used());
      ASSERT_EQ(a.queued_packets(), b.queued_packets());
      ASSERT_NO_FATAL_FAILURE(expect_same_counts(a, b));
    }
    // The case is exercised both ways.
    EXPECT_GT(passed, 1000u);
    EXPECT_GT(b.residence().total() - passed, 1000u);
    EXPECT_GT(a.ecn_marks(), 0u);
    EXPECT_EQ(a.ecn_marks(), b.ecn_marks());
  }
}

// pass_summed() is the same enqueue and dequeue with its counts published
// later: two ports fed the same arrivals, pauses and dequeues, one
// queueing each packet that may pass and taking it out at once, the other
// passing it with pass_summed() (publishing before every dequeue, as the
// worker does before its next transmit), agree on every verdict, and once
// published on every count, the residence histogram and the order of
// what they queue afterwards. A third port on each buffer holds bytes, so
// that passes are refused too. (No ECN setting
// marks an empty queue, so the marks compared are the queued packets';
// RED's coin, drawn for every pass, keeps them in step.)
TEST(EgressPort, PassSummedIsPassPublishedLater) {
  SharedBuffer buffer_a(6000, 1.0), buffer_b(6000, 1.0);
  EgressPortConfig cfg = small_config();
  cfg.drr_quantum_bytes = 700;
  red_from_empty(cfg);
  EgressPort a(cfg, &buffer_a), b(cfg, &buffer_b);
  EgressPort filler_a(cfg, &buffer_a), filler_b(cfg, &buffer_b);
  std::mt19937_64 rng(11);
  uint64_t now = 0;
  unsigned passed = 0, refused = 0;
  for (int step = 0; step < 20000; ++step) {
    now += rng() % 50;
    const unsigned op = static_cast<unsigned>(rng() % 12);
    const uint16_t q = static_cast<uint16_t>(rng() % 4);
    if (op < 6) {
      const TmPacket p =
          packet(64 + static_cast<uint32_t>(rng() % 1400), static_cast<uint16_t>(step));
      const bool ect = rng() % 2 == 0;
      ASSERT_EQ(a.can_cut(now, q), b.can_cut(now, q));
      if (b.can_cut(now, q)) {
        const EnqueueResult rb = b.pass_summed(q, p.bytes, ect);
        const EnqueueResult ra = a.enqueue(now, q, p, ect);
        ASSERT_EQ(ra.verdict, rb.verdict);
        ASSERT_EQ(ra.reason, rb.reason);
        if (ra.verdict != EnqueueVerdict::kDropped) {
          const std::vector<TmPacket> out = take(a, now, 1);
          ASSERT_EQ(out.size(), 1u);  // the reference takes the same packet at once
          ASSERT_EQ(out[0].aux, p.aux);
        }
        ++(ra.verdict == EnqueueVerdict::kDropped ? refused : passed);
      } else {
        ASSERT_EQ(a.enqueue(now, q, p, ect).verdict, b.enqueue(now, q, p, ect).verdict);
      }
    } else if (op < 8) {  // the other port's traffic fills and drains the buffer
      if (rng() % 2 == 0) {
        const TmPacket p = packet(500 + static_cast<uint32_t>(rng() % 1000));
        ASSERT_EQ(filler_a.enqueue(now, q, p, false).verdict,
                  filler_b.enqueue(now, q, p, false).verdict);
      } else {
        ASSERT_EQ(take(filler_a, now, 2).size(), take(filler_b, now, 2).size());
      }
    } else if (op < 11) {
      b.pass_publish();
      ASSERT_NO_FATAL_FAILURE(expect_same_counts(a, b));
      const unsigned max = 1 + static_cast<unsigned>(rng() % 3);
      const std::vector<TmPacket> oa = take(a, now, max), ob = take(b, now, max);
      ASSERT_EQ(oa.size(), ob.size());
      for (size_t i = 0; i < oa.size(); ++i) ASSERT_EQ(oa[i].aux, ob[i].aux);
    } else if (rng() % 2 == 0) {
      const uint64_t until = now + rng() % 300;
      a.pause_queue(q, until);
      b.pause_queue(q, until);
    } else {
      a.resume_queue(q);
      b.resume_queue(q);
    }
    ASSERT_EQ(buffer_a.used(), buffer_b.used());
    ASSERT_EQ(a.queued_packets(), b.queued_packets());
  }
  b.pass_publish();
  ASSERT_NO_FATAL_FAILURE(expect_same_counts(a, b));
  // Runs of passes, refusals and marks all happened.
  EXPECT_GT(passed, 1000u);
  EXPECT_GT(refused, 10u);
  EXPECT_GT(a.ecn_marks(), 0u);
  EXPECT_EQ(a.ecn_marks(), b.ecn_marks());
}

// On a shaped port, can_cut() allows a pass exactly when the dequeue_burst
// at that instant would send the packet at once, and pass() and
// cut_summed() charge the bucket as that dequeue does: two shaped ports fed the same arrivals
// and dequeues at the same instants, one queueing every packet and taking
// each one that may pass out at once, the other passing it, send the same
// packets at the same instants and count the same lost transmit time
// (publishing the passes before every dequeue, as the worker does). After
// a pass, a run's further packets pass while pass_tokens() finds tokens.
// Arrivals come in bursts faster than the rate, so the bucket runs dry
// (no pass) and refills (passes again).
TEST(EgressPort, ACutOnAShapedPortIsEnqueueThenDequeue) {
  SharedBuffer buffer_a(1 << 20, 1.0), buffer_b(1 << 20, 1.0);
  EgressPortConfig cfg = small_config();
  cfg.rate_bps = 10'000'000'000;  // 10 Gb/s: 0.8 ns a byte
  cfg.burst_bytes = 4000;
  cfg.wire_overhead_bytes = 24;
  EgressPort a(cfg, &buffer_a), b(cfg, &buffer_b);
  std::mt19937_64 rng(3);
  uint64_t now = 0;
  unsigned passed = 0, held = 0, in_runs = 0;
  for (int step = 0; step < 20000; ++step) {
    now += rng() % 5 == 0 ? rng() % 5'000 : rng() % 200;
    const uint16_t q = static_cast<uint16_t>(rng() % 4);
    if (rng() % 2 != 0) {
      const TmPacket p =
          packet(64 + static_cast<uint32_t>(rng() % 1400), static_cast<uint16_t>(step));
      const bool idle = b.queued_packets() == 0;
      if (b.can_cut(now, q)) {
        // Exact time passes a packet alone (pass(): published at once),
        // real time sums a burst's (cut_summed()): both charge the bucket.
        const EnqueueResult rb =
            step % 3 == 0 ? b.pass(q, p, false) : b.cut_summed(q, p.bytes, false);
        ASSERT_EQ(rb.verdict, EnqueueVerdict::kEnqueued);
        ASSERT_EQ(a.enqueue(now, q, p, false).verdict, EnqueueVerdict::kEnqueued);
        const std::vector<TmPacket> out = take(a, now, 1);
        ASSERT_EQ(out.size(), 1u) << step;  // the reference sends it at once
        ASSERT_EQ(out[0].aux, p.aux);
        ++passed;
        // A run (Worker::cut_run): more packets for q at the same instant,
        // each passing while the bucket still holds tokens.
        for (unsigned k = rng() % 4; k > 0; --k) {
          const TmPacket r = packet(64 + static_cast<uint32_t>(rng() % 1400), 50'000);
          ASSERT_EQ(a.enqueue(now, q, r, false).verdict, EnqueueVerdict::kEnqueued);
          if (!b.pass_tokens(r.bytes)) {
            ASSERT_TRUE(take(a, now, 1).empty()) << step;
            ASSERT_EQ(b.enqueue(now, q, r, false).verdict, EnqueueVerdict::kEnqueued);
            b.pass_publish();
            ASSERT_TRUE(take(b, now, 1).empty()) << step;
            ++held;
            break;
          }
          b.pass_run(q, 1, r.bytes);
          ASSERT_EQ(take(a, now, 1).size(), 1u) << step;
          ++in_runs;
        }
      } else {
        ASSERT_EQ(a.enqueue(now, q, p, false).verdict, b.enqueue(now, q, p, false).verdict);
        if (idle) {  // refused for want of tokens: the reference would not send it now
          ASSERT_TRUE(take(a, now, 1).empty()) << step;
          b.pass_publish();  // before every dequeue, as the worker does
          ASSERT_TRUE(take(b, now, 1).empty()) << step;
          ++held;
        }
      }
    } else {
      b.pass_publish();
      const unsigned max = 1 + static_cast<unsigned>(rng() % 4);
      const std::vector<TmPacket> oa = take(a, now, max), ob = take(b, now, max);
      ASSERT_EQ(oa.size(), ob.size()) << step;
      for (size_t i = 0; i < oa.size(); ++i) ASSERT_EQ(oa[i].aux, ob[i].aux);
    }
    ASSERT_EQ(a.next_event_ns(now), b.next_event_ns(now)) << step;
    ASSERT_EQ(a.shaper_lost_ns(), b.shaper_lost_ns()) << step;
  }
  b.pass_publish();
  ASSERT_NO_FATAL_FAILURE(expect_same_counts(a, b));
  EXPECT_GT(passed, 1000u);
  EXPECT_GT(in_runs, 1000u);
  EXPECT_GT(held, 100u);
}

// pass_run() is pass_summed() repeated: a port that, after a packet has
// passed, counts each next pass of the same queue that pass_limit() and
// passes_unmarked() allow with one pass_run() at the run's end (as the
// worker's cut-through run does) keeps the counts of a port that calls
// pass_summed() for every packet, and each packet the run took is one that
// pass_summed() admitted unmarked. Nothing else happens at the port during
// a run; between runs a filler port on the same buffer moves it. ECN as
// step marking (an empty queue is never marked), RED from an empty queue
// (its coin is drawn per packet, so no run may form) and off.
TEST(EgressPort, PassRunIsPassSummedRepeated) {
  for (int ecn = 0; ecn < 3; ++ecn) {
    SharedBuffer buffer_a(8000, 1.0), buffer_b(8000, 1.0);
    EgressPortConfig cfg = small_config();
    if (ecn == 0) {
      cfg.ecn.mode = EcnMode::kStep;
      cfg.ecn.step_k_bytes = 0;
    } else if (ecn == 1) {
      red_from_empty(cfg);
    }
    EgressPort a(cfg, &buffer_a), b(cfg, &buffer_b);
    EgressPort filler_a(cfg, &buffer_a), filler_b(cfg, &buffer_b);
    std::mt19937_64 rng(17);
    unsigned in_runs = 0, refused = 0;
    for (int burst = 0; burst < 3000; ++burst) {
      // Between bursts: the filler moves the buffer, then the ports' counts
      // are published (the worker's transmit).
      for (int i = 0; i < 3; ++i) {
        if (rng() % 2 == 0) {
          const TmPacket p = packet(300 + static_cast<uint32_t>(rng() % 1500));
          ASSERT_EQ(filler_a.enqueue(0, 0, p, false).verdict,
                    filler_b.enqueue(0, 0, p, false).verdict);
        } else {
          ASSERT_EQ(take(filler_a, 0, 2).size(), take(filler_b, 0, 2).size());
        }
      }
      a.pass_publish();
      b.pass_publish();
      ASSERT_NO_FATAL_FAILURE(expect_same_counts(a, b));
      bool run = false;
      uint16_t run_queue = 0;
      uint64_t limit = 0;
      uint32_t packets = 0;
      uint64_t bytes = 0;
      const unsigned n = 1 + static_cast<unsigned>(rng() % 32);
      for (unsigned i = 0; i < n; ++i) {
        const uint16_t q = static_cast<uint16_t>(rng() % 8 == 0 ? rng() % 4 : 1);
        const uint32_t size = rng() % 16 == 0 ? 4000 + static_cast<uint32_t>(rng() % 4000)
                                              : 64 + static_cast<uint32_t>(rng() % 1400);
        const bool ect = rng() % 2 == 0;
        ASSERT_TRUE(a.can_cut(0, q));
        const EnqueueResult ra = a.pass_summed(q, size, ect);
        if (run && q == run_queue && size <= limit) {
          ASSERT_EQ(ra.verdict, EnqueueVerdict::kEnqueued) << "burst " << burst << " packet " << i;
          ++packets;
          bytes += size;
          ++in_runs;
          continue;
        }
        if (run) b.pass_run(run_queue, packets, bytes);
        run = false;
        packets = 0;
        bytes = 0;
        const EnqueueResult rb = b.pass_summed(q, size, ect);
        ASSERT_EQ(ra.verdict, rb.verdict);
        ASSERT_EQ(ra.reason, rb.reason);
        if (rb.verdict == EnqueueVerdict::kDropped) {
          ++refused;
        } else if (b.passes_unmarked()) {
          run = true;
          run_queue = q;
          limit = b.pass_limit();
        }
      }
      if (run) b.pass_run(run_queue, packets, bytes);
    }
    a.pass_publish();
    b.pass_publish();
    ASSERT_NO_FATAL_FAILURE(expect_same_counts(a, b));
    EXPECT_EQ(a.ecn_marks(), b.ecn_marks());
    EXPECT_GT(refused, 100u) << "ecn " << ecn;
    if (ecn == 1) {
      EXPECT_FALSE(b.passes_unmarked());
      EXPECT_EQ(in_runs, 0u);
    } else {
      EXPECT_TRUE(b.passes_unmarked());
      EXPECT_GT(in_runs, 10000u) << "ecn " << ecn;
    }
  }
}

// pass_each() and pass_residences(), a run whose queue may change from one
// packet to the next (Worker::choice_run: after the pass that starts it, a
// pass_publish(), then pass_each() per packet, pass_residences() at its
// end), leave what the same packets passed one by one with pass() leave:
// the counts, the residence histogram and the scheduler's turn, so that
// what both ports queue afterwards leaves in the same order.
TEST(EgressPort, PassEachIsPassPerPacket) {
  SharedBuffer buffer_a(1 << 16, 1.0), buffer_b(1 << 16, 1.0);
  EgressPortConfig cfg = small_config();
  cfg.scheduler = SchedulerKind::kDrr;
  cfg.drr_quantum_bytes = 700;
  EgressPort a(cfg, &buffer_a), b(cfg, &buffer_b);
  std::mt19937_64 rng(23);
  uint64_t now = 0;
  unsigned passed_each = 0, queued = 0;
  for (int burst = 0; burst < 2000; ++burst) {
    now += 1000;
    const unsigned n = 1 + static_cast<unsigned>(rng() % 32);
    unsigned run = 0;
    for (unsigned i = 0; i < n; ++i) {
      const uint16_t q = static_cast<uint16_t>(rng() % 4);
      const uint32_t size = 64 + static_cast<uint32_t>(rng() % 1400);
      ASSERT_TRUE(a.can_cut(now, q));
      ASSERT_EQ(a.pass(q, packet(size), false).verdict, EnqueueVerdict::kEnqueued);
      if (i == 0) {
        ASSERT_EQ(b.pass_summed(q, size, false).verdict, EnqueueVerdict::kEnqueued);
        continue;
      }
      if (i == 1) b.pass_publish();
      b.pass_each(q, size);
      ++run;
    }
    if (run != 0) b.pass_residences(run);
    b.pass_publish();  // the worker's transmit
    passed_each += run;
    ASSERT_NO_FATAL_FAILURE(expect_same_counts(a, b)) << "burst " << burst;
    // Some packets queued on both, then taken: they leave in the same
    // order only if the passes left the scheduler's turn alike.
    const unsigned k = static_cast<unsigned>(rng() % 8);
    for (unsigned i = 0; i < k; ++i) {
      const uint16_t q = static_cast<uint16_t>(rng() % 4);
      const TmPacket p = packet(64 + static_cast<uint32_t>(rng() % 1400), static_cast<uint16_t>(i));
      ASSERT_EQ(a.enqueue(now, q, p, false).verdict, b.enqueue(now, q, p, false).verdict);
    }
    const std::vector<TmPacket> ta = take(a, now), tb = take(b, now);
    ASSERT_EQ(ta.size(), k);
    ASSERT_EQ(tb.size(), k);
    for (unsigned i = 0; i < k; ++i) {
      ASSERT_EQ(ta[i].queue, tb[i].queue) << "burst " << burst << " packet " << i;
      ASSERT_EQ(ta[i].aux, tb[i].aux) << "burst " << burst << " packet " << i;
    }
    queued += k;
  }
  ASSERT_NO_FATAL_FAILURE(expect_same_counts(a, b));
  EXPECT_GT(passed_each, 20000u);
  EXPECT_GT(queued, 5000u);
}

}  // namespace
}  // namespace sluice
