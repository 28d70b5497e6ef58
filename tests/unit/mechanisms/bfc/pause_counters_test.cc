#include "lib/mechanisms/bfc/pause_counters.h"

#include <gtest/gtest.h>

#include <array>
#include <stdexcept>

namespace sluice {
namespace {

// Ports 0 and 1 face switches, port 2 faces a host.
constexpr std::array<bool, 3> kFacing = {true, true, false};
constexpr uint64_t kTh = 10'000;

TEST(BfcPauseCounters, BelowOrAtThresholdNothingHappens) {
  PauseCounters c(kFacing);
  EXPECT_FALSE(c.on_enqueue(0, 3, 1, 0, kTh).flagged);
  EXPECT_FALSE(c.on_enqueue(0, 3, 1, kTh, kTh).flagged);  // "longer than Th" is strict
  EXPECT_EQ(c.counter(0, 3), 0u);
  EXPECT_EQ(c.paused(0).word(0), 0u);
}

TEST(BfcPauseCounters, FirstFlaggedPacketPausesLastOneResumes) {
  PauseCounters c(kFacing);
  EnqueueDecision d = c.on_enqueue(0, 3, 1, kTh + 1, kTh);
  EXPECT_TRUE(d.flagged);
  EXPECT_EQ(d.signal, BfcSignal::kPause);
  EXPECT_EQ(c.paused(0).word(0), uint64_t{1} << 3);
  EXPECT_EQ(c.paused_upstream_queues.get(), 1u);
  d = c.on_enqueue(0, 3, 1, kTh + 2000, kTh);
  EXPECT_TRUE(d.flagged);
  EXPECT_EQ(d.signal, BfcSignal::kNone);  // 1 -> 2: already paused
  EXPECT_EQ(c.counter(0, 3), 2u);
  // A packet into a short queue is not flagged, even while paused.
  EXPECT_FALSE(c.on_enqueue(0, 3, 1, 100, kTh).flagged);
  EXPECT_EQ(c.on_flagged_departure(0, 3), BfcSignal::kNone);    // 2 -> 1
  EXPECT_EQ(c.on_flagged_departure(0, 3), BfcSignal::kResume);  // 1 -> 0
  EXPECT_EQ(c.paused(0).word(0), 0u);
  EXPECT_EQ(c.pauses_requested.get(), 1u);
  EXPECT_EQ(c.resumes_requested.get(), 1u);
  EXPECT_EQ(c.paused_upstream_queues.get(), 0u);
  // And again from zero.
  EXPECT_EQ(c.on_enqueue(0, 3, 1, kTh + 1, kTh).signal, BfcSignal::kPause);
  EXPECT_EQ(c.pauses_requested.get(), 2u);
}

TEST(BfcPauseCounters, CountersAreSeparatePerIngressAndUpstreamQueue) {
  PauseCounters c(kFacing);
  EXPECT_EQ(c.on_enqueue(0, 3, 1, kTh + 1, kTh).signal, BfcSignal::kPause);
  EXPECT_EQ(c.on_enqueue(0, 4, 1, kTh + 1, kTh).signal, BfcSignal::kPause);
  EXPECT_EQ(c.on_enqueue(1, 3, 0, kTh + 1, kTh).signal, BfcSignal::kPause);
  EXPECT_EQ(c.on_enqueue(0, 63, 1, kTh + 1, kTh).signal, BfcSignal::kPause);
  EXPECT_EQ(c.paused(0).word(0), (uint64_t{1} << 3) | (uint64_t{1} << 4) | (uint64_t{1} << 63));
  EXPECT_EQ(c.paused(1).word(0), uint64_t{1} << 3);
  EXPECT_EQ(c.on_flagged_departure(0, 4), BfcSignal::kResume);
  EXPECT_EQ(c.paused(0).word(0), (uint64_t{1} << 3) | (uint64_t{1} << 63));
  EXPECT_EQ(c.paused_upstream_queues.get(), 3u);
}

TEST(BfcPauseCounters, HostFacingIngressNeverPauses) {
  PauseCounters c(kFacing);
  // Port 2 faces a host; even with a queue number it never counts.
  EXPECT_FALSE(c.on_enqueue(2, 0, 1, 10 * kTh, kTh).flagged);
  EXPECT_EQ(c.counter(2, 0), 0u);
  // No upstream queue (no shim) on a switch-facing port: never counts either.
  EXPECT_FALSE(c.on_enqueue(0, kNoUpstreamQueue, 1, 10 * kTh, kTh).flagged);
  EXPECT_EQ(c.pauses_requested.get(), 0u);
}

TEST(BfcPauseCounters, ElidedPairsNeverGenerateBackpressure) {
  PauseCounters c(kFacing);
  c.elide_pair(0, 1);  // e.g. down from the spine and back up
  EXPECT_TRUE(c.elided(0, 1));
  EXPECT_FALSE(c.elided(1, 0));
  EXPECT_FALSE(c.on_enqueue(0, 3, 1, 10 * kTh, kTh).flagged);
  EXPECT_EQ(c.counter(0, 3), 0u);
  // The same ingress toward another egress still counts.
  EXPECT_EQ(c.on_enqueue(0, 3, 2, 10 * kTh, kTh).signal, BfcSignal::kPause);
  EXPECT_THROW(c.elide_pair(0, 3), std::invalid_argument);
}

TEST(BfcPauseCounters, RejectsNoPorts) {
  EXPECT_THROW(PauseCounters(std::span<const bool>{}), std::invalid_argument);
}

// A BFC NIC with a queue per flow: its ingress port counts and pauses any
// of its 4096 queues, a switch's port its 64; beyond them nothing counts.
TEST(BfcPauseCounters, UpstreamQueueCountsPerPort) {
  const std::array<uint16_t, 3> upstream = {64, 64, 4096};
  const std::array<bool, 3> facing = {true, true, true};
  PauseCounters c(facing, upstream);
  EXPECT_EQ(c.upstream_queues(2), 4096u);
  EXPECT_EQ(c.on_enqueue(2, 4095, 0, 10 * kTh, kTh).signal, BfcSignal::kPause);
  EXPECT_EQ(c.on_enqueue(2, 70, 0, 10 * kTh, kTh).signal, BfcSignal::kPause);
  EXPECT_TRUE(c.paused(2).test(4095));
  EXPECT_TRUE(c.paused(2).test(70));
  EXPECT_EQ(c.paused_count(2), 2u);
  EXPECT_EQ(c.paused(2).word(63), uint64_t{1} << 63);
  EXPECT_FALSE(c.on_enqueue(0, 64, 1, 10 * kTh, kTh).flagged) << "a switch has 64 queues";
  EXPECT_EQ(c.on_flagged_departure(2, 4095), BfcSignal::kResume);
  EXPECT_FALSE(c.paused(2).test(4095));
  EXPECT_EQ(c.paused_count(2), 1u);
  const std::array<uint16_t, 3> zero = {64, 0, 64};
  EXPECT_THROW(PauseCounters(facing, zero), std::invalid_argument);
  const std::array<uint16_t, 2> short_list = {64, 64};
  EXPECT_THROW(PauseCounters(facing, short_list), std::invalid_argument);
}

}  // namespace
}  // namespace sluice
