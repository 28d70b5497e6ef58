#include "lib/emulator/link/link_ring.h"

#include "lib/emulator/link/link_timing.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <deque>
#include <functional>
#include <random>
#include <thread>
#include <vector>

namespace sluice {
namespace {

// Frame i, due at 10 i + 3: each slot keeps both.
LinkSlot token(uintptr_t i) { return LinkSlot{reinterpret_cast<void*>(i + 1), 10 * i + 3}; }
bool same(const LinkSlot& a, const LinkSlot& b) {
  return a.frame == b.frame && a.due_ns == b.due_ns;
}

// The consumer taking up to n frames off, oldest first, as a receiver
// does (front, then pop); returns how many.
uint32_t take(LinkRing& r, LinkSlot* out, uint32_t n) {
  uint32_t got = 0;
  for (const LinkSlot* s; got < n && (s = r.front()) != nullptr; r.pop()) out[got++] = *s;
  return got;
}

TEST(LinkRing, HoldsOneFrameFewerThanItsSlots) {
  LinkRing r(8);
  EXPECT_EQ(r.capacity(), 7u);
  EXPECT_EQ(r.free_count(), 7u);
  EXPECT_EQ(r.count(), 0u);
  std::vector<LinkSlot> in;
  for (uintptr_t i = 0; i < 7; ++i) in.push_back(token(i));
  r.put(in.data(), 7);
  EXPECT_EQ(r.free_count(), 0u);
  EXPECT_EQ(r.count(), 7u);
  LinkSlot out[16];
  EXPECT_EQ(take(r, out, 16), 7u);  // no more than there are
  for (uintptr_t i = 0; i < 7; ++i) EXPECT_TRUE(same(out[i], token(i))) << i;
  EXPECT_EQ(take(r, out, 16), 0u);
  EXPECT_EQ(r.free_count(), 7u);
}

// Random bursts in and out, many times round the slots: the order and the
// counts of a reference queue.
TEST(LinkRing, KeepsOrderAcrossWrapAround) {
  LinkRing r(16);
  std::deque<LinkSlot> ref;
  std::mt19937 rng(3);
  uintptr_t next = 0;
  LinkSlot buf[32];
  for (int step = 0; step < 100000; ++step) {
    if (rng() % 2 == 0) {
      const uint32_t n = rng() % (r.free_count() + 1);
      for (uint32_t i = 0; i < n; ++i) {
        buf[i] = token(next++);
        ref.push_back(buf[i]);
      }
      r.put(buf, n);
    } else {
      const uint32_t want = rng() % 20;
      const uint32_t got = take(r, buf, want);
      ASSERT_EQ(got, std::min<size_t>(want, ref.size()));
      for (uint32_t i = 0; i < got; ++i) {
        ASSERT_TRUE(same(buf[i], ref.front()));
        ref.pop_front();
      }
    }
    ASSERT_EQ(r.count(), ref.size());
    ASSERT_EQ(r.free_count(), r.capacity() - ref.size());
  }
}

// The producer of the two-thread tests: frames 0..frames in bursts of up
// to 32, as room allows.
void produce(LinkRing& r, uintptr_t frames) {
  uintptr_t i = 0;
  LinkSlot buf[32];
  while (i < frames) {
    uint32_t n = std::min<uint32_t>(r.free_count(), 32);
    n = static_cast<uint32_t>(std::min<uintptr_t>(n, frames - i));
    for (uint32_t k = 0; k < n; ++k) buf[k] = token(i + k);
    r.put(buf, n);
    i += n;
  }
}

// Reading in place: front() is the oldest frame until pop() takes it off
// and sees frames put on after it last found none; known_front() reports
// only what front() last found.
TEST(LinkRing, FrontReadsTheOldestInPlace) {
  LinkRing r(8);
  EXPECT_EQ(r.front(), nullptr);
  EXPECT_EQ(r.known_front(), nullptr);
  const LinkSlot a = token(0), b = token(1), c = token(2);
  r.put(&a, 1);
  EXPECT_EQ(r.known_front(), nullptr);  // put on since front() last looked
  ASSERT_NE(r.front(), nullptr);
  EXPECT_TRUE(same(*r.front(), a));
  ASSERT_NE(r.known_front(), nullptr);
  EXPECT_TRUE(same(*r.known_front(), a));
  r.put(&b, 1);
  EXPECT_TRUE(same(*r.front(), a));  // still the oldest
  r.pop();
  EXPECT_EQ(r.free_count(), 6u);
  ASSERT_NE(r.front(), nullptr);
  EXPECT_TRUE(same(*r.front(), b));
  r.put(&c, 1);
  LinkSlot out[4];
  ASSERT_EQ(take(r, out, 4), 2u);
  EXPECT_TRUE(same(out[0], b));
  EXPECT_TRUE(same(out[1], c));
  EXPECT_EQ(r.front(), nullptr);
  EXPECT_EQ(r.known_front(), nullptr);
  EXPECT_EQ(r.count(), 0u);
}

// One producer thread, one consumer thread (two lcores at each end of a
// link): every frame arrives, once, in order, with its due time; a small
// ring is full often, a large one seldom.
TEST(LinkRing, OneProducerOneConsumerOnTwoThreads) {
  constexpr uintptr_t kFrames = 2'000'000;
  for (const uint32_t slots : {64u, 1024u}) {
    LinkRing r(slots);
    std::thread producer(produce, std::ref(r), kFrames);
    uintptr_t expect = 0;
    LinkSlot buf[32];
    bool in_order = true;
    while (expect < kFrames) {
      const uint32_t got = take(r, buf, 32);
      for (uint32_t k = 0; k < got; ++k) in_order &= same(buf[k], token(expect++));
    }
    producer.join();
    EXPECT_TRUE(in_order) << slots << " slots";
    EXPECT_EQ(r.count(), 0u) << slots << " slots";
    EXPECT_EQ(r.front(), nullptr) << slots << " slots";
  }
}

// The most frames in flight on a link in exact time, found by sending
// frames of `min_bytes` back to back (a frame is in flight from its start
// until its due time): the worst case exact_link_ring_size must cover,
// twice over (a receiver on another lcore takes its frames up to a window
// late, and a window is at most the delay plus a minimum frame).
uint32_t most_in_flight(uint64_t rate_bps, uint64_t delay_ns, uint32_t overhead,
                        uint32_t min_bytes) {
  LinkTiming t(rate_bps, overhead, delay_ns);
  std::deque<uint64_t> due;
  uint32_t most = 0;
  uint64_t now = 0;
  for (int i = 0; i < 100'000; ++i) {
    while (!due.empty() && due.front() <= now) due.pop_front();
    due.push_back(t.depart(now, min_bytes));
    most = std::max<uint32_t>(most, static_cast<uint32_t>(due.size()));
    now = t.wire_free_ns();  // the next frame starts when the wire is free
  }
  return most;
}

TEST(LinkRing, ExactTimeSizeHoldsWhatCanBeInFlight) {
  struct Case {
    uint64_t rate_bps, delay_ns;
    uint32_t overhead;
  };
  for (const Case c : {Case{100'000'000'000, 1'000, 24}, Case{10'000'000'000, 1'000, 24},
                       Case{400'000'000'000, 2'000, 24}, Case{25'000'000'000, 50, 0},
                       Case{1'000'000'000, 10'000'000, 24}}) {
    const uint32_t slots = exact_link_ring_size(c.rate_bps, c.delay_ns, 14 + c.overhead, 32);
    EXPECT_EQ(slots & (slots - 1), 0u);
    const uint32_t worst = most_in_flight(c.rate_bps, c.delay_ns, c.overhead, 14);
    EXPECT_GE(LinkRing(slots).capacity(), 2 * worst)
        << c.rate_bps << " bps, " << c.delay_ns << " ns";
    // No bigger than that calls for (the point: a ring whose slots stay in
    // the caches): within a power of two of twice the worst plus two bursts.
    EXPECT_LT(slots, 2 * (2 * worst + 2 * 32 + 2)) << c.rate_bps << " bps, " << c.delay_ns << " ns";
  }
  // The scenario of docs/benchmarks.md: 100 Gb/s, 1 us. Real time's size
  // keeps 50 us of slack on top.
  EXPECT_EQ(exact_link_ring_size(100'000'000'000, 1'000, 38, 32), 1024u);
  EXPECT_EQ(link_ring_size(100'000'000'000, 1'000), 16384u);
  // No serialisation time: no bound from the rate; real time's size.
  EXPECT_EQ(exact_link_ring_size(0, 1'000, 38, 32), link_ring_size(0, 1'000));
}

}  // namespace
}  // namespace sluice
