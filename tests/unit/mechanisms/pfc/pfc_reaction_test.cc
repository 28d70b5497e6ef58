#include "lib/mechanisms/pfc/pfc_reaction.h"

#include <gtest/gtest.h>

#include <stdexcept>
#include <vector>

namespace sluice {
namespace {

constexpr uint64_t k10G = 10'000'000'000ull;

MacControlFrame pfc(uint8_t enable, std::array<uint16_t, 8> quanta) {
  MacControlFrame f;
  f.opcode = kOpcodePfc;
  f.class_enable = enable;
  f.quanta = quanta;
  return f;
}

MacControlFrame pfc_one(uint8_t cls, uint16_t quanta) {
  std::array<uint16_t, 8> q{};
  q[cls] = quanta;
  return pfc(static_cast<uint8_t>(1u << cls), q);
}

MacControlFrame pause(uint16_t quanta) {
  MacControlFrame f;
  f.opcode = kOpcodePause;
  f.class_enable = 0xFF;
  f.quanta.fill(quanta);
  return f;
}

PfcReactionConfig config(PfcMode mode = PfcMode::kPfc, uint32_t num_queues = 32) {
  PfcReactionConfig c;
  c.mode = mode;
  c.rate_bps = k10G;
  c.class_queues = default_class_queues(num_queues);
  return c;
}

struct Port {
  explicit Port(uint32_t num_queues = 32) : buffer(1 << 20, 8.0), port(cfg(num_queues), &buffer) {}
  static EgressPortConfig cfg(uint32_t n) {
    EgressPortConfig c;
    c.num_queues = n;
    c.queue_capacity = 64;
    return c;
  }
  // Queues paused at now, as a bitmask.
  uint64_t paused(uint64_t now) const {
    uint64_t m = 0;
    for (uint16_t q = 0; q < port.num_queues(); ++q) {
      if (port.queue_paused(q, now)) m |= uint64_t{1} << q;
    }
    return m;
  }
  SharedBuffer buffer;
  EgressPort port;
};

TEST(PfcReaction, RefusesZeroRate) {
  PfcReactionConfig c = config();
  c.rate_bps = 0;
  EXPECT_THROW(PfcReaction{c}, std::invalid_argument);
}

TEST(PfcReaction, PausesExactlyTheQueuesOfTheClassUntilExpiry) {
  Port p;
  PfcReaction r(config());
  // 100 quanta at 10 Gb/s = 5,120 ns; class 3 = queues 12..15 of 32.
  r.apply(pfc_one(3, 100), 1'000, &p.port);
  EXPECT_EQ(p.paused(1'000), 0xF000u);
  EXPECT_EQ(p.paused(6'119), 0xF000u);
  EXPECT_EQ(p.paused(6'120), 0u);
  EXPECT_TRUE(r.paused(3, 6'119));
  EXPECT_FALSE(r.paused(3, 6'120));
  EXPECT_FALSE(p.port.port_paused(1'000));
  EXPECT_EQ(r.stats().received[3].get(), 1u);

  // The scheduler holds queue 12 back and lets queue 0 go until expiry.
  TmPacket pkt;
  pkt.bytes = 100;
  ASSERT_EQ(p.port.enqueue(1'000, 12, pkt, false).verdict, EnqueueVerdict::kEnqueued);
  ASSERT_EQ(p.port.enqueue(1'000, 0, pkt, false).verdict, EnqueueVerdict::kEnqueued);
  TmPacket out[4];
  ASSERT_EQ(p.port.dequeue_burst(2'000, out, 4), 1u);
  EXPECT_EQ(out[0].queue, 0);
  EXPECT_EQ(p.port.dequeue_burst(6'119, out, 4), 0u);
  ASSERT_EQ(p.port.dequeue_burst(6'120, out, 4), 1u);
  EXPECT_EQ(out[0].queue, 12);
}

TEST(PfcReaction, ZeroQuantaResumesAtOnce) {
  Port p;
  PfcReaction r(config());
  r.apply(pfc_one(3, 100), 1'000, &p.port);
  r.apply(pfc_one(3, 0), 3'000, &p.port);
  EXPECT_EQ(p.paused(3'000), 0u);
  EXPECT_EQ(r.paused_ns(3, 10'000), 2'000u);
}

TEST(PfcReaction, NewerFrameExtendsOrShortens) {
  Port p;
  PfcReaction r(config());
  r.apply(pfc_one(3, 100), 1'000, &p.port);  // until 6,120
  r.apply(pfc_one(3, 200), 4'000, &p.port);  // until 4,000 + 10,240
  EXPECT_EQ(p.paused(14'239), 0xF000u);
  EXPECT_EQ(p.paused(14'240), 0u);
  r.apply(pfc_one(3, 100), 20'000, &p.port);  // until 25,120
  r.apply(pfc_one(3, 10), 21'000, &p.port);   // until 21,000 + 512
  EXPECT_EQ(p.paused(21'511), 0xF000u);
  EXPECT_EQ(p.paused(21'512), 0u);
  EXPECT_EQ(r.paused_ns(3, 30'000), 13'240u + 1'512u);
}

TEST(PfcReaction, SeveralClassesInOneFrame) {
  Port p;
  PfcReaction r(config());
  // Classes 0 and 7 pause, class 2 is enabled with 0 (a resume of nothing),
  // class 5's time is not enabled and must be ignored.
  r.apply(pfc(0x85, {100, 0, 0, 0, 0, 50, 0, 200}), 0, &p.port);
  EXPECT_EQ(p.paused(0), 0xF000000Full);
  EXPECT_EQ(p.paused(5'120), 0xF0000000ull);  // class 0 ended at 5,120
  EXPECT_EQ(p.paused(10'240), 0u);
  EXPECT_EQ(r.stats().received[2].get(), 1u);
  EXPECT_EQ(r.stats().received[5].get(), 0u);
  EXPECT_EQ(r.paused_ns(2, 100'000), 0u);
}

TEST(PfcReaction, ClassesSharingAQueueKeepItPausedUntilTheLastEnds) {
  Port p(4);  // classes 0 and 1 both map to queue 0
  PfcReaction r(config(PfcMode::kPfc, 4));
  r.apply(pfc_one(0, 100), 0, &p.port);  // until 5,120
  r.apply(pfc_one(1, 200), 0, &p.port);  // until 10,240
  EXPECT_EQ(p.paused(5'120), 0b1u);
  r.apply(pfc_one(1, 0), 1'000, &p.port);  // class 0 still holds it
  EXPECT_EQ(p.paused(1'000), 0b1u);
  EXPECT_EQ(p.paused(5'120), 0u);
  r.apply(pfc_one(1, 100), 2'000, &p.port);
  r.apply(pfc_one(0, 0), 3'000, &p.port);  // class 1 holds it to 7,120
  EXPECT_EQ(p.paused(7'119), 0b1u);
  EXPECT_EQ(p.paused(7'120), 0u);
  // The later end wins whichever class index holds it.
  r.apply(pfc_one(0, 200), 20'000, &p.port);  // until 30,240
  r.apply(pfc_one(1, 100), 20'000, &p.port);  // until 25,120
  EXPECT_EQ(p.paused(30'239), 0b1u);
  EXPECT_EQ(p.paused(30'240), 0u);
}

TEST(PfcReaction, PausedTimeExactOverSeveralIntervals) {
  Port p;
  PfcReaction r(config());
  r.apply(pfc_one(3, 100), 1'000, &p.port);   // [1,000, 6,120): expires, 5,120
  EXPECT_EQ(r.paused_ns(3, 3'000), 2'000u);   // inside the first interval
  r.apply(pfc_one(3, 50), 10'000, &p.port);   // until 12,560
  r.apply(pfc_one(3, 0), 11'000, &p.port);    // resumed: 1,000
  r.apply(pfc_one(3, 100), 20'000, &p.port);  // until 25,120
  r.apply(pfc_one(3, 100), 22'000, &p.port);  // refreshed to 27,120: 7,120
  EXPECT_EQ(r.paused_ns(3, 23'000), 5'120u + 1'000 + 3'000);
  EXPECT_EQ(r.paused_ns(3, 100'000), 5'120u + 1'000 + 7'120);
  EXPECT_EQ(r.paused_ns(4, 100'000), 0u);
  // settle() folds time into the scraper's counter without changing totals.
  r.settle(23'000);
  EXPECT_EQ(r.stats().paused_ns[3].get(), 9'120u);
  EXPECT_EQ(r.paused_ns(3, 100'000), 13'240u);
  r.settle(100'000);
  EXPECT_EQ(r.stats().paused_ns[3].get(), 13'240u);
  EXPECT_EQ(r.paused_ns(3, 200'000), 13'240u);
}

TEST(PfcReaction, PauseModePausesTheWholePort) {
  Port p;
  PfcReaction r(config(PfcMode::kPause));
  r.apply(pause(100), 1'000, &p.port);
  EXPECT_TRUE(p.port.port_paused(6'119));
  EXPECT_FALSE(p.port.port_paused(6'120));
  EXPECT_EQ(p.paused(1'000), 0u);       // no per-queue pause
  r.apply(pause(100), 2'000, &p.port);  // refresh to 7,120
  EXPECT_TRUE(p.port.port_paused(7'119));
  r.apply(pause(0), 3'000, &p.port);
  EXPECT_FALSE(p.port.port_paused(3'000));
  EXPECT_EQ(r.paused_ns(kAllPriorities, 50'000), 2'000u);
  EXPECT_EQ(r.stats().received[kAllPriorities].get(), 3u);
}

TEST(PfcReaction, OtherKindAndUnhonouredClassesAreIgnored) {
  Port p;
  PfcReaction pfc_port(config(PfcMode::kPfc));
  pfc_port.apply(pause(100), 0, &p.port);
  EXPECT_FALSE(p.port.port_paused(0));
  EXPECT_EQ(pfc_port.stats().ignored.get(), 1u);
  EXPECT_EQ(pfc_port.stats().frames_received.get(), 1u);

  PfcReaction pause_port(config(PfcMode::kPause));
  pause_port.apply(pfc_one(0, 100), 0, &p.port);
  EXPECT_EQ(p.paused(0), 0u);
  EXPECT_EQ(pause_port.stats().ignored.get(), 1u);

  PfcReaction off(config(PfcMode::kOff));
  off.apply(pfc_one(0, 100), 0, &p.port);
  off.apply(pause(100), 0, &p.port);
  EXPECT_EQ(p.paused(0), 0u);
  EXPECT_FALSE(p.port.port_paused(0));
  EXPECT_EQ(off.stats().ignored.get(), 2u);

  PfcReactionConfig c = config();
  c.priorities = 0x08;
  PfcReaction only3(c);
  only3.apply(pfc(0x09, {100, 0, 0, 100, 0, 0, 0, 0}), 0, &p.port);
  EXPECT_EQ(p.paused(0), 0xF000u);
  EXPECT_EQ(only3.stats().received[0].get(), 0u);
}

TEST(PfcReaction, MappingBeyondThePortsQueuesIsClipped) {
  Port p(4);
  PfcReaction r(config(PfcMode::kPfc, 32));  // class 7 = queues 28..31
  r.apply(pfc(0x81, {100, 0, 0, 0, 0, 0, 0, 100}), 0, &p.port);
  EXPECT_EQ(p.paused(0), 0xFu);  // class 0 = queues 0..3, all of this port
  EXPECT_TRUE(r.paused(7, 0));   // still accounted
}

TEST(PfcReaction, ReceiveParsesAndCountsInvalid) {
  Port p;
  PfcReaction r(config());
  uint8_t frame[60];
  std::array<uint16_t, 8> q{};
  q[6] = 100;
  ASSERT_EQ(build_pfc_frame(frame, 60, {2, 0, 0, 0, 0, 1}, 0x40, q), 60u);
  EXPECT_TRUE(r.receive(frame + 14, 46, 0, &p.port));
  EXPECT_EQ(p.paused(0), 0xF000000ull);
  EXPECT_FALSE(r.receive(frame + 14, 10, 0, &p.port));
  frame[15] = 0x02;  // opcode 0x0102
  EXPECT_FALSE(r.receive(frame + 14, 46, 0, &p.port));
  EXPECT_EQ(r.stats().invalid.get(), 2u);
  EXPECT_EQ(r.stats().frames_received.get(), 1u);
}

}  // namespace
}  // namespace sluice
