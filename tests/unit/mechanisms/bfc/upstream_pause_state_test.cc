#include "lib/mechanisms/bfc/upstream_pause_state.h"

#include <gtest/gtest.h>

#include <array>
#include <vector>

#include "lib/mechanisms/bfc/bitmap_schedule.h"
#include "lib/mechanisms/bfc/pause_counters.h"

namespace sluice {
namespace {

struct Upstream {
  SharedBuffer buffer{1 << 20, 1.0};
  EgressPort port;
  UpstreamPauseState state;
  Upstream() : port(config(), &buffer), state(&port) {}
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
  Upstream u;
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
  Upstream u;
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
  Upstream u;
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
  Upstream u;
  EXPECT_FALSE(u.state.on_pause(64, 0));  // beyond the wire's shards
  EXPECT_FALSE(u.state.on_pause(0, 8));   // no such queue
  EXPECT_FALSE(u.state.on_resume(0, 8));
  const uint8_t bits[] = {0x00, 0x01};
  EXPECT_FALSE(u.state.on_bitmap(64, bits, 16));  // no such shard
  EXPECT_EQ(u.state.invalid_frames.get(), 4u);
  EXPECT_EQ(u.state.paused_mask(), 0u);
}

TEST(BfcUpstreamPauseState, BitmapAppliesOurQueuesAndIgnoresOnesWeLack) {
  Upstream u;                         // queues 0..7
  const uint8_t ok[] = {0x04, 0x00};  // wider than the port, extra bits clear
  EXPECT_TRUE(u.state.on_bitmap(0, ok, 16));
  EXPECT_EQ(u.state.paused_mask(), 0b100u);
  EXPECT_EQ(u.state.unknown_queue_bitmaps.get(), 0u);
  const uint8_t bits[] = {0x81, 0x01};  // queues 0, 7 and 8: we lack 8
  EXPECT_TRUE(u.state.on_bitmap(0, bits, 16));
  EXPECT_EQ(u.state.paused_mask(), 0b1000'0001u);  // 2 released, 0 and 7 held
  EXPECT_EQ(u.state.unknown_queue_bitmaps.get(), 1u);
  uint8_t wide[128] = {};  // a peer with 1024 queues, queue 1023 and our 1 paused
  wide[0] = 0x02;
  wide[127] = 0x80;
  EXPECT_TRUE(u.state.on_bitmap(0, wide, 1024));
  EXPECT_EQ(u.state.paused_mask(), 0b10u);
  EXPECT_EQ(u.state.unknown_queue_bitmaps.get(), 2u);
  EXPECT_EQ(u.state.invalid_frames.get(), 0u);
}

// Downstream counters + bitmap schedule + upstream state, with the resume
// frame lost on the wire: the next bitmap repairs it.
TEST(BfcUpstreamPauseState, BitmapRepairsADroppedResumeAndADroppedPause) {
  const std::array<bool, 2> facing = {true, true};
  PauseCounters down(facing);
  const uint64_t interval = 80'000;
  BitmapSchedule bitmaps(facing, interval, 0);
  Upstream up;
  auto send_bitmap = [&](uint16_t port) {
    if (port != 0) return;  // upstream switch is behind ingress port 0
    const uint64_t m = down.paused(0).word(0);
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
  EXPECT_EQ(up.state.bitmap_repaired_resumes.get(), 1u);
  EXPECT_EQ(up.state.bitmap_repaired_pauses.get(), 0u);

  // A lost pause heals the same way.
  EXPECT_EQ(down.on_enqueue(0, 6, 1, 50'000, 10'000).signal, BfcSignal::kPause);
  EXPECT_FALSE(up.state.paused(6));
  bitmaps.poll(2 * interval, send_bitmap);
  EXPECT_TRUE(up.state.paused(6));
  EXPECT_EQ(up.state.paused_mask(), uint64_t{1} << 6);
  EXPECT_EQ(up.state.bitmap_repaired_pauses.get(), 1u);
  // A bitmap that agrees with the holds repairs nothing.
  bitmaps.poll(3 * interval, send_bitmap);
  EXPECT_EQ(up.state.bitmap_repaired_pauses.get(), 1u);
  EXPECT_EQ(up.state.bitmap_repaired_resumes.get(), 1u);
}

// Frames as they arrive: built by the real builders, parsed by parse_control.
// `buf` must outlive the message (it points into it).
constexpr MacAddr kUpMac = {0x02, 0, 0, 0, 0, 0x01};
constexpr MacAddr kDownMac = {0x02, 0, 0, 0, 0, 0x02};

ControlMessage parsed(const uint8_t* buf, uint32_t len) {
  ControlMessage m{};
  EXPECT_GT(len, 14u);
  if (len <= 14) return m;
  EXPECT_EQ(parse_control(buf + 14, len - 14, &m), ControlParseResult::kOk);
  return m;
}

struct Wire {
  uint8_t buf[256];
  ControlMessage pause(uint8_t shard, uint16_t q) {
    return parsed(buf, build_bfc_pause(buf, sizeof buf, kUpMac, kDownMac, shard, q));
  }
  ControlMessage resume(uint8_t shard, uint16_t q) {
    return parsed(buf, build_bfc_resume(buf, sizeof buf, kUpMac, kDownMac, shard, q));
  }
  ControlMessage bitmap(uint8_t shard, const uint64_t* words, uint16_t count) {
    return parsed(buf, build_bfc_bitmap(buf, sizeof buf, kUpMac, kDownMac, shard, words, count));
  }
};

TEST(BfcUpstreamPauseState, MessagesDriveTheEgressPort) {
  Upstream u;
  Wire w;
  TmPacket p;
  p.bytes = 500;
  u.port.enqueue(0, 3, p, false);
  EXPECT_TRUE(u.state.on_message(w.pause(1, 3)));
  EXPECT_TRUE(u.port.queue_paused(3, 1'000'000'000));
  EXPECT_EQ(u.state.paused_mask(), 0b1000u);
  EXPECT_EQ(u.sent(10), 0u);
  EXPECT_EQ(u.port.queue_packets(3), 1u);
  EXPECT_TRUE(u.state.on_message(w.resume(1, 3)));
  EXPECT_FALSE(u.port.queue_paused(3, 20));
  EXPECT_EQ(u.sent(20), 1u);

  // Bitmap of shard 0: queues 5 and 7 (byte 0 = 0b1010'0000).
  const uint64_t words[1] = {0b1010'0000};
  EXPECT_TRUE(u.state.on_message(w.bitmap(0, words, 8)));
  EXPECT_EQ(u.state.paused_mask(), 0b1010'0000u);
  EXPECT_TRUE(u.port.queue_paused(5, 30));
  EXPECT_TRUE(u.port.queue_paused(7, 30));
  EXPECT_FALSE(u.port.queue_paused(6, 30));
  // Shard 1 pauses 5 too; shard 0's next bitmap drops 5 and 7, 5 stays held.
  EXPECT_TRUE(u.state.on_message(w.pause(1, 5)));
  const uint64_t none[1] = {0};
  EXPECT_TRUE(u.state.on_message(w.bitmap(0, none, 8)));
  EXPECT_EQ(u.state.paused_mask(), 0b0010'0000u);
  EXPECT_EQ(u.state.invalid_frames.get(), 0u);
}

TEST(BfcUpstreamPauseState, BitmapMessageRepairsALostResume) {
  Upstream u;
  Wire w;
  TmPacket p;
  p.bytes = 1000;
  u.port.enqueue(0, 2, p, false);
  u.port.enqueue(0, 4, p, false);
  EXPECT_TRUE(u.state.on_message(w.pause(0, 2)));
  EXPECT_TRUE(u.state.on_message(w.pause(0, 4)));
  EXPECT_EQ(u.sent(10), 0u);
  // RESUME(2) is lost. Downstream still holds 4 and says so in its bitmap.
  const uint64_t held[1] = {uint64_t{1} << 4};
  EXPECT_TRUE(u.state.on_message(w.bitmap(0, held, 8)));
  EXPECT_FALSE(u.port.queue_paused(2, 20));
  EXPECT_TRUE(u.port.queue_paused(4, 20));
  EXPECT_EQ(u.sent(20), 1u);  // queue 2's packet, kept all along
  EXPECT_EQ(u.port.queue_packets(4), 1u);
  // A 32-queue bitmap (wider than this port) with only queue 4 set: no change.
  EXPECT_TRUE(u.state.on_message(w.bitmap(0, held, 32)));
  EXPECT_EQ(u.state.paused_mask(), uint64_t{1} << 4);
}

// Finding (d): a downstream that counts a queue this port lacks (a peer
// configured with more queues) still repairs a lost resume with its next
// bitmap; before, one such bit had the whole bitmap rejected and the queue
// stayed paused for good.
TEST(BfcUpstreamPauseState, BitmapWithAnUnknownQueueStillRepairsALostResume) {
  const std::array<bool, 2> facing = {true, true};  // upstream behind 0, egress 1
  PauseCounters down(facing);
  const uint64_t interval = 80'000;
  BitmapSchedule bitmaps(facing, interval, 0);
  Upstream up;  // 8 queues
  Wire w;
  auto send_bitmap = [&](uint16_t port) {
    if (port != 0) return;
    const uint64_t words[1] = {down.paused(0).word(0)};
    EXPECT_TRUE(up.state.on_message(w.bitmap(0, words, 16)));
  };
  TmPacket p;
  p.bytes = 1000;
  up.port.enqueue(0, 2, p, false);
  // Queues 2 and 9 (which this port lacks) pass Th; only 2's pause lands.
  EXPECT_EQ(down.on_enqueue(0, 2, 1, 50'000, 10'000).signal, BfcSignal::kPause);
  EXPECT_TRUE(up.state.on_message(w.pause(0, 2)));
  EXPECT_EQ(down.on_enqueue(0, 9, 1, 50'000, 10'000).signal, BfcSignal::kPause);
  EXPECT_FALSE(up.state.on_message(w.pause(0, 9)));
  // Queue 2's flagged packet leaves; the resume is lost.
  EXPECT_EQ(down.on_flagged_departure(0, 2), BfcSignal::kResume);
  bitmaps.poll(interval - 1, send_bitmap);
  EXPECT_TRUE(up.port.queue_paused(2, interval - 1));
  EXPECT_EQ(up.sent(interval - 1), 0u);
  bitmaps.poll(interval, send_bitmap);  // bits: 9 only
  EXPECT_FALSE(up.port.queue_paused(2, interval));
  EXPECT_EQ(up.sent(interval), 1u);
  EXPECT_EQ(up.state.paused_mask(), 0u);
  EXPECT_EQ(up.state.unknown_queue_bitmaps.get(), 1u);
  EXPECT_EQ(up.state.invalid_frames.get(), 1u);  // the pause of queue 9
}

// The shard byte is the sender's lcore slot: a downstream running more
// workers than this process (here, in the switch, one) still pauses and
// resumes, from any shard the wire allows (0..63).
TEST(BfcUpstreamPauseState, AnyShardUpTo63IsAcceptedWhateverOurWorkerCount) {
  Upstream u;
  Wire w;
  EXPECT_TRUE(u.state.on_message(w.pause(63, 2)));
  EXPECT_TRUE(u.state.on_message(w.pause(1, 3)));
  EXPECT_EQ(u.state.paused_mask(), 0b1100u);
  const uint64_t q2[1] = {0b100};
  EXPECT_TRUE(u.state.on_message(w.bitmap(63, q2, 8)));  // still holds 2 only
  EXPECT_TRUE(u.state.on_message(w.resume(1, 3)));
  EXPECT_EQ(u.state.paused_mask(), 0b100u);
  EXPECT_TRUE(u.state.on_message(w.resume(63, 2)));
  EXPECT_EQ(u.state.paused_mask(), 0u);
  EXPECT_EQ(u.state.invalid_frames.get(), 0u);
}

TEST(BfcUpstreamPauseState, ShardsOrQueuesBeyondTheWiresRangeAreRejectedAndCounted) {
  Upstream u;  // queues 0..7
  Wire w;
  EXPECT_TRUE(u.state.on_message(w.pause(0, 1)));
  EXPECT_FALSE(u.state.on_message(w.pause(64, 0)));  // the byte encodes it; no such shard
  EXPECT_FALSE(u.state.on_message(w.pause(255, 0)));
  EXPECT_FALSE(u.state.on_message(w.pause(0, 8)));
  EXPECT_FALSE(u.state.on_message(w.pause(0, 0xFFFF)));
  EXPECT_FALSE(u.state.on_message(w.resume(64, 1)));
  EXPECT_FALSE(u.state.on_message(w.resume(0, 8)));
  const uint64_t all[1] = {0xFF};
  EXPECT_FALSE(u.state.on_message(w.bitmap(64, all, 8)));
  EXPECT_EQ(u.state.invalid_frames.get(), 7u);
  EXPECT_EQ(u.state.paused_mask(), 0b10u);  // only the valid pause took effect
  EXPECT_TRUE(u.port.queue_paused(1, 0));
  EXPECT_FALSE(u.port.queue_paused(0, 0));
}

TEST(BfcUpstreamPauseState, FloodgateMessagesAreNotItsBusiness) {
  Upstream u;
  uint8_t buf[128];
  const CreditEntry credit[] = {{0x0A000001, 1500}};
  const ControlListFrame c = build_fg_credit(buf, sizeof buf, 1500, kUpMac, kDownMac, 0, credit);
  EXPECT_FALSE(u.state.on_message(parsed(buf, c.len)));
  const DstPauseEntry dp[] = {{0x0A000001, true}};
  const ControlListFrame d = build_fg_dst_pause(buf, sizeof buf, 1500, kUpMac, kDownMac, 0, dp);
  EXPECT_FALSE(u.state.on_message(parsed(buf, d.len)));
  const SyncEntry sy[] = {{0x0A000001, 123}};
  const ControlListFrame s = build_fg_sync(buf, sizeof buf, 1500, kUpMac, kDownMac, 0, sy);
  EXPECT_FALSE(u.state.on_message(parsed(buf, s.len)));
  EXPECT_EQ(u.state.paused_mask(), 0u);
  EXPECT_EQ(u.state.invalid_frames.get(), 0u);  // not a bad BFC frame, just not BFC
}

}  // namespace
}  // namespace sluice
