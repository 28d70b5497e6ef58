#include "lib/tm/shared_buffer.h"

#include <gtest/gtest.h>

#include <vector>

#include "lib/tm/egress_port.h"

namespace sluice {
namespace {

TEST(SharedBuffer, ThresholdIsAlphaTimesFree) {
  SharedBuffer b(10000, 2.0);
  EXPECT_EQ(b.threshold(), 20000u);
  b.charge(4000);
  EXPECT_EQ(b.used(), 4000u);
  EXPECT_EQ(b.threshold(), 12000u);
  b.release(4000);
  EXPECT_EQ(b.used(), 0u);
}

TEST(SharedBuffer, AdmissionReasons) {
  SharedBuffer b(10000, 1.0);
  b.charge(9950);
  DropReason why = DropReason::kCount;
  // 50 bytes free: a 100-byte packet does not fit at all.
  EXPECT_FALSE(b.admits(0, 100, &why));
  EXPECT_EQ(why, DropReason::kBufferFull);
  // A 50-byte packet fits the buffer and an empty queue's threshold (1 x 50).
  EXPECT_TRUE(b.admits(0, 50, &why));
  // ...but not a queue already holding 10 bytes (10 + 50 > 50).
  EXPECT_FALSE(b.admits(10, 50, &why));
  EXPECT_EQ(why, DropReason::kQueueThreshold);
}

// admit_limit() is the boundary of admits(): every size up to it is
// admitted and the next one is not, over fillings from empty to past full
// (charge() may overfill: held packets are charged without admission), for
// alphas below, at and above 1.
TEST(SharedBuffer, AdmitLimitIsAdmitsBoundary) {
  for (double alpha : {0.25, 1.0, 8.0}) {
    SharedBuffer b(10000, alpha);
    DropReason why;
    for (uint64_t used : {0u, 1u, 3000u, 9000u, 9999u, 10000u, 10500u}) {
      b.charge(used);
      for (uint64_t queue : {0u, 10u, 2000u, 50000u}) {
        const uint64_t limit = b.admit_limit(queue);
        for (uint64_t bytes = 1; bytes <= 20000; ++bytes)
          ASSERT_EQ(b.admits(queue, static_cast<uint32_t>(bytes), &why), bytes <= limit)
              << "alpha " << alpha << " used " << used << " queue " << queue << " bytes " << bytes
              << " limit " << limit;
      }
      b.release(used);
    }
    // The figures themselves, where they are plain to see.
    EXPECT_EQ(b.admit_limit(0), alpha < 1.0 ? 2500u : 10000u);
    b.charge(10000);
    EXPECT_EQ(b.admit_limit(0), 0u);
    b.release(10000);
  }
}

TEST(SharedBuffer, RejectsBadAlpha) {
  EXPECT_THROW(SharedBuffer(1000, 0.0), std::invalid_argument);
  EXPECT_THROW(SharedBuffer(1000, -1.0), std::invalid_argument);
}

// Fills `active` queues of one port round-robin with 100-byte packets until
// every one is refused, and returns the bytes each holds.
std::vector<uint64_t> settle(uint64_t capacity, double alpha, unsigned active) {
  SharedBuffer buffer(capacity, alpha);
  EgressPortConfig cfg;
  cfg.num_queues = 8;
  cfg.queue_capacity = 1u << 16;
  EgressPort port(cfg, &buffer);
  TmPacket p;
  p.bytes = 100;
  std::vector<bool> refused(active, false);
  unsigned refused_count = 0;
  while (refused_count < active) {
    for (unsigned q = 0; q < active; ++q) {
      if (refused[q]) continue;
      EnqueueResult r = port.enqueue(0, static_cast<uint16_t>(q), p, false);
      if (r.verdict == EnqueueVerdict::kDropped) {
        EXPECT_EQ(r.reason, DropReason::kQueueThreshold);
        refused[q] = true;
        ++refused_count;
      }
    }
  }
  std::vector<uint64_t> bytes;
  for (unsigned q = 0; q < active; ++q) bytes.push_back(port.queue_bytes(static_cast<uint16_t>(q)));
  EXPECT_EQ(buffer.used(), port.queued_bytes());
  return bytes;
}

// Steady state: q = alpha * (B - N q), i.e. q = alpha B / (1 + N alpha). The
// values below are that formula worked by hand for 100-byte packets.
TEST(SharedBuffer, OneQueueAlphaOneTakesHalf) {
  // q = 1 x 1,000,000 / 2
  EXPECT_EQ(settle(1'000'000, 1.0, 1), std::vector<uint64_t>({500'000}));
}

TEST(SharedBuffer, OneQueueAlphaTwoTakesTwoThirds) {
  // q = 2 x 900,000 / 3
  EXPECT_EQ(settle(900'000, 2.0, 1), std::vector<uint64_t>({600'000}));
}

TEST(SharedBuffer, TwoQueuesAlphaOneTakeAThirdEach) {
  // q = 900,000 / (1 + 2)
  EXPECT_EQ(settle(900'000, 1.0, 2), std::vector<uint64_t>({300'000, 300'000}));
}

TEST(SharedBuffer, FourQueuesAlphaHalfTakeASixthEach) {
  // q = 0.5 x 600,000 / (1 + 4 x 0.5) = 100,000; 200,000 stays free.
  EXPECT_EQ(settle(600'000, 0.5, 4), std::vector<uint64_t>({100'000, 100'000, 100'000, 100'000}));
}

}  // namespace
}  // namespace sluice

namespace sluice {
namespace {

// try_charge is admits + charge: same answer everywhere, charges only on yes.
TEST(SharedBuffer, TryChargeAgreesWithAdmits) {
  for (uint64_t used : {0, 300, 999, 1000}) {
    for (uint64_t queue : {0, 100, 400, 700}) {
      for (uint32_t bytes : {1, 100, 300, 1000}) {
        SharedBuffer b(1000, 1.5);
        if (used != 0) b.charge(used);
        DropReason why;
        const bool admits = b.admits(queue, bytes, &why);
        EXPECT_EQ(b.try_charge(queue, bytes), admits) << used << " " << queue << " " << bytes;
        EXPECT_EQ(b.used(), admits ? used + bytes : used);
      }
    }
  }
}

}  // namespace
}  // namespace sluice
