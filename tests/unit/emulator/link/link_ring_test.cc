#include "lib/emulator/link/link_ring.h"

#include <gtest/gtest.h>

#include <cstdint>
#include <deque>
#include <random>
#include <thread>
#include <vector>

namespace sluice {
namespace {

void* token(uintptr_t i) { return reinterpret_cast<void*>(i + 1); }

TEST(LinkRing, HoldsOneFrameFewerThanItsSlots) {
  LinkRing r(8);
  EXPECT_EQ(r.capacity(), 7u);
  EXPECT_EQ(r.free_count(), 7u);
  EXPECT_EQ(r.count(), 0u);
  std::vector<void*> in;
  for (uintptr_t i = 0; i < 7; ++i) in.push_back(token(i));
  r.put(in.data(), 7);
  EXPECT_EQ(r.free_count(), 0u);
  EXPECT_EQ(r.count(), 7u);
  void* out[16];
  EXPECT_EQ(r.take(out, 16), 7u);  // no more than there are
  for (uintptr_t i = 0; i < 7; ++i) EXPECT_EQ(out[i], token(i));
  EXPECT_EQ(r.take(out, 16), 0u);
  EXPECT_EQ(r.free_count(), 7u);
}

// Random bursts in and out, many times round the slots: the order and the
// counts of a reference queue.
TEST(LinkRing, KeepsOrderAcrossWrapAround) {
  LinkRing r(16);
  std::deque<void*> ref;
  std::mt19937 rng(3);
  uintptr_t next = 0;
  void* buf[32];
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
      const uint32_t got = r.take(buf, want);
      ASSERT_EQ(got, std::min<size_t>(want, ref.size()));
      for (uint32_t i = 0; i < got; ++i) {
        ASSERT_EQ(buf[i], ref.front());
        ref.pop_front();
      }
    }
    ASSERT_EQ(r.count(), ref.size());
    ASSERT_EQ(r.free_count(), r.capacity() - ref.size());
  }
}

// One producer thread, one consumer thread (two lcores at each end of a
// link): every frame arrives, once, in order.
TEST(LinkRing, OneProducerOneConsumerOnTwoThreads) {
  constexpr uintptr_t kFrames = 2'000'000;
  LinkRing r(1024);
  std::thread producer([&] {
    uintptr_t i = 0;
    void* buf[32];
    while (i < kFrames) {
      uint32_t n = std::min<uint32_t>(r.free_count(), 32);
      n = static_cast<uint32_t>(std::min<uintptr_t>(n, kFrames - i));
      for (uint32_t k = 0; k < n; ++k) buf[k] = token(i + k);
      r.put(buf, n);
      i += n;
    }
  });
  uintptr_t expect = 0;
  void* buf[32];
  bool in_order = true;
  while (expect < kFrames) {
    const uint32_t got = r.take(buf, 32);
    for (uint32_t k = 0; k < got; ++k) in_order &= buf[k] == token(expect++);
  }
  producer.join();
  EXPECT_TRUE(in_order);
  EXPECT_EQ(r.count(), 0u);
}

}  // namespace
}  // namespace sluice
