#include "lib/bfc/upstream_pause_state.h"

#include <gtest/gtest.h>

#include <array>
#include <stdexcept>
#include <vector>

#include "lib/bfc/bitmap_schedule.h"
#include "lib/bfc/pause_counters.h"

namespace sluice {
namespace {

struct Upstream {
  SharedBuffer buffer{1 << 20, 1.0};
  EgressPort port;
  UpstreamPauseState state;
  explicit Upstream(uint32_t shards) : port(config(), &buffer), state(&port, shards) {}
  static EgressPortConfig config() {
    EgressPortConfig c;
    c.num_queues = 8;
    return c;
  }
  unsigned sent(uint64_t now) {
    TmPacket out[16];
    return port.dequeue_burst(now, out, 16);
  }
};

TEST(BfcUpstreamPauseState, PauseHoldsPacketsResumeReleasesThem) {
  Upstream u(1);
  TmPacket p;
  p.bytes = 1000;
  u.port.enqueue(0, 2, p, false);
  EXPECT_TRUE(u.state.on_pause(0, 2));
  EXPECT_TRUE(u.state.paused(2));
  EXPECT_TRUE(u.port.queue_paused(2, 1'000'000'000));  // until resumed
  EXPECT_EQ(u.sent(10), 0u);
  EXPECT_EQ(u.port.queue_packets(2), 1u);  // kept, not dropped
  EXPECT_TRUE(u.state.on_resume(0, 2));
  EXPECT_FALSE(u.port.queue_paused(2, 20));
  EXPECT_EQ(u.sent(20), 1u);
}

TEST(BfcUpstreamPauseState, PausedWhileAnyShardHoldsIt) {
  Upstream u(3);
  u.state.on_pause(0, 5);
  u.state.on_pause(2, 5);
  EXPECT_EQ(u.state.paused_mask(), uint64_t{1} << 5);
  u.state.on_resume(0, 5);
  EXPECT_TRUE(u.port.queue_paused(5, 0));
  u.state.on_resume(0, 5);  // a duplicate resume changes nothing
  EXPECT_TRUE(u.port.queue_paused(5, 0));
  u.state.on_resume(2, 5);
  EXPECT_FALSE(u.port.queue_paused(5, 0));
  EXPECT_EQ(u.state.paused_mask(), 0u);
}

TEST(BfcUpstreamPauseState, BitmapReplacesOneShardsHolds) {
  Upstream u(2);
  u.state.on_pause(0, 1);
  u.state.on_pause(1, 6);
  const uint8_t bits[] = {0b0000'1001};  // shard 0: queues 0 and 3
  EXPECT_TRUE(u.state.on_bitmap(0, bits, 8));
  EXPECT_EQ(u.state.paused_mask(), 0b0100'1001u);  // 1 released; 6 still held by shard 1
  EXPECT_TRUE(u.port.queue_paused(0, 0));
  EXPECT_FALSE(u.port.queue_paused(1, 0));
  // Queues beyond the bitmap's count are released by that shard.
  EXPECT_TRUE(u.state.on_bitmap(1, bits, 2));
  EXPECT_EQ(u.state.paused_mask(), 0b0000'1001u);
}

TEST(BfcUpstreamPauseState, InvalidFramesChangeNothingAndAreCounted) {
  Upstream u(2);
  EXPECT_FALSE(u.state.on_pause(2, 0));  // no such shard
  EXPECT_FALSE(u.state.on_pause(0, 8));  // no such queue
  EXPECT_FALSE(u.state.on_resume(0, 8));
  const uint8_t bits[] = {0x00, 0x01};  // queue 8 paused: this port has 8 queues
  EXPECT_FALSE(u.state.on_bitmap(0, bits, 16));
  const uint8_t ok[] = {0x04, 0x00};  // wider than the port, extra bits clear: fine
  EXPECT_TRUE(u.state.on_bitmap(0, ok, 16));
  EXPECT_EQ(u.state.paused_mask(), 0b100u);
  uint8_t wide[128] = {};  // a peer with 1024 queues: fine while ours are the only bits set
  wide[0] = 0x01;
  EXPECT_TRUE(u.state.on_bitmap(0, wide, 1024));
  EXPECT_EQ(u.state.paused_mask(), 0b1u);
  wide[127] = 0x80;  // queue 1023
  EXPECT_FALSE(u.state.on_bitmap(0, wide, 1024));
  EXPECT_EQ(u.state.invalid_frames.get(), 5u);
  EXPECT_THROW(UpstreamPauseState(&u.port, 0), std::invalid_argument);
  EXPECT_THROW(UpstreamPauseState(&u.port, 65), std::invalid_argument);
}

// Downstream counters + bitmap schedule + upstream state, with the resume
// frame lost on the wire: the next bitmap repairs it.
TEST(BfcUpstreamPauseState, BitmapRepairsADroppedResumeAndADroppedPause) {
  const std::array<bool, 2> facing = {true, true};
  PauseCounters down(facing);
  const uint64_t interval = 80'000;
  BitmapSchedule bitmaps(facing, interval, 0);
  Upstream up(1);
  auto send_bitmap = [&](uint16_t port) {
    if (port != 0) return;  // upstream switch is behind ingress port 0
    const uint64_t m = down.paused_mask(0);
    uint8_t body[8];
    for (int i = 0; i < 8; ++i) body[i] = static_cast<uint8_t>(m >> (8 * i));
    up.state.on_bitmap(0, body, 8);
  };

  // t=1000: a packet from upstream queue 4 finds a long queue -> pause, delivered.
  EXPECT_EQ(down.on_enqueue(0, 4, 1, 50'000, 10'000).signal, BfcSignal::kPause);
  up.state.on_pause(0, 4);
  EXPECT_TRUE(up.port.queue_paused(4, 1000));
  // t=5000: it leaves -> resume, but the frame is lost.
  EXPECT_EQ(down.on_flagged_departure(0, 4), BfcSignal::kResume);
  bitmaps.poll(interval - 1, send_bitmap);
  EXPECT_TRUE(up.port.queue_paused(4, interval - 1));  // still stuck
  bitmaps.poll(interval, send_bitmap);
  EXPECT_FALSE(up.port.queue_paused(4, interval));  // healed

  // A lost pause heals the same way.
  EXPECT_EQ(down.on_enqueue(0, 6, 1, 50'000, 10'000).signal, BfcSignal::kPause);
  EXPECT_FALSE(up.state.paused(6));
  bitmaps.poll(2 * interval, send_bitmap);
  EXPECT_TRUE(up.state.paused(6));
  EXPECT_EQ(up.state.paused_mask(), uint64_t{1} << 6);
}

}  // namespace
}  // namespace sluice
