// The capture ring carries whole pcap records from a worker to the writer
// thread: records are byte-exact, wrap around the ring's end, are published
// only once complete, and are left out (counted) when the writer is behind.
#include "lib/capture/capture_ring.h"

#include <gtest/gtest.h>

#include <thread>
#include <vector>

namespace sluice {
namespace {

using Bytes = std::vector<uint8_t>;

void le32(Bytes* b, uint32_t v) {
  for (int i = 0; i < 4; ++i) b->push_back(static_cast<uint8_t>(v >> (8 * i)));
}

Bytes record(uint64_t ts_ns, const Bytes& frame, uint32_t snaplen) {
  Bytes r;
  const uint32_t caplen = std::min<uint32_t>(frame.size(), snaplen);
  le32(&r, static_cast<uint32_t>(ts_ns / 1'000'000'000));
  le32(&r, static_cast<uint32_t>(ts_ns % 1'000'000'000));
  le32(&r, caplen);
  le32(&r, static_cast<uint32_t>(frame.size()));
  r.insert(r.end(), frame.begin(), frame.begin() + caplen);
  return r;
}

Bytes frame(size_t len, uint8_t seed) {
  Bytes f(len);
  for (size_t i = 0; i < len; ++i) f[i] = static_cast<uint8_t>(seed + i * 13);
  return f;
}

Bytes drain_all(CaptureRing& ring) {
  Bytes out;
  ring.drain([&](const uint8_t* p, size_t n) { out.insert(out.end(), p, p + n); });
  return out;
}

TEST(CaptureRing, RecordsAreExactAndCutAtTheSnaplen) {
  CaptureRing ring(4096, 100);
  const Bytes a = frame(60, 1), b = frame(300, 2);
  ASSERT_TRUE(ring.begin_record(1'500'000'000'123, 60));
  ring.append(a.data(), 60);
  ASSERT_TRUE(ring.begin_record(2'000'000'000'007, 300));
  ring.append(b.data(), 120);  // in two pieces, as mbuf segments come
  ring.append(b.data() + 120, 180);
  Bytes expected = record(1'500'000'000'123, a, 100);
  const Bytes rb = record(2'000'000'000'007, b, 100);
  expected.insert(expected.end(), rb.begin(), rb.end());
  EXPECT_EQ(drain_all(ring), expected);
  EXPECT_EQ(ring.records(), 2u);
  EXPECT_EQ(ring.dropped(), 0u);
  EXPECT_TRUE(drain_all(ring).empty());
}

TEST(CaptureRing, ARecordIsPublishedOnlyWhenComplete) {
  CaptureRing ring(4096, 65535);
  const Bytes a = frame(200, 3);
  ASSERT_TRUE(ring.begin_record(5, 200));
  ring.append(a.data(), 100);
  EXPECT_TRUE(drain_all(ring).empty());
  ring.append(a.data() + 100, 100);
  EXPECT_EQ(drain_all(ring), record(5, a, 65535));
}

TEST(CaptureRing, WrapsAroundAndLeavesOutWhatDoesNotFit) {
  CaptureRing ring(4096, 65535);  // records of 16 + 1000 bytes: four fit
  Bytes expected;
  for (int i = 0; i < 4; ++i) {
    const Bytes f = frame(1000, static_cast<uint8_t>(i));
    ASSERT_TRUE(ring.begin_record(i, 1000));
    ring.append(f.data(), 1000);
    const Bytes r = record(i, f, 65535);
    expected.insert(expected.end(), r.begin(), r.end());
  }
  const Bytes late = frame(1000, 9);
  EXPECT_FALSE(ring.begin_record(99, 1000));  // the writer is behind
  ring.append(late.data(), 1000);             // ignored, not half-written
  EXPECT_EQ(ring.dropped(), 1u);
  EXPECT_EQ(drain_all(ring), expected);
  // The next records start near the end of the ring and wrap.
  expected.clear();
  for (int i = 0; i < 3; ++i) {
    const Bytes f = frame(1000, static_cast<uint8_t>(20 + i));
    ASSERT_TRUE(ring.begin_record(100 + i, 1000));
    ring.append(f.data(), 1000);
    const Bytes r = record(100 + i, f, 65535);
    expected.insert(expected.end(), r.begin(), r.end());
  }
  EXPECT_EQ(drain_all(ring), expected);
  EXPECT_EQ(ring.records(), 7u);
}

TEST(CaptureRing, AProducerAndAConsumerThreadLoseNothingWhenThereIsRoom) {
  CaptureRing ring(1 << 16, 65535);
  constexpr int kRecords = 20'000;
  Bytes got;
  std::thread consumer([&] {
    const size_t want = kRecords * (16 + 64);
    while (got.size() < want)
      ring.drain([&](const uint8_t* p, size_t n) { got.insert(got.end(), p, p + n); });
  });
  Bytes expected;
  for (int i = 0; i < kRecords; ++i) {
    const Bytes f = frame(64, static_cast<uint8_t>(i));
    while (!ring.begin_record(i, 64)) {
    }  // the consumer frees room
    ring.append(f.data(), 64);
    const Bytes r = record(i, f, 65535);
    expected.insert(expected.end(), r.begin(), r.end());
  }
  consumer.join();
  EXPECT_EQ(got, expected);
}

}  // namespace
}  // namespace sluice
