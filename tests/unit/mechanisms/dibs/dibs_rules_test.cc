// DIBS's rules together, as the data path will call them: a refused packet
// is detoured (its count goes up) or dropped under its own reason; real
// traffic managers on a simulated clock, one lcore and two.
#include "lib/mechanisms/dibs/dibs_rules.h"

#include <gtest/gtest.h>

#include <memory>
#include <vector>

#include "lib/mechanisms/dibs/detour_admission.h"

namespace sluice {
namespace {

DibsConfig dibs(DibsPolicy policy = DibsPolicy::kRandom, uint32_t max_detours = 0) {
  DibsConfig c;
  c.enabled = true;
  c.policy = policy;
  c.max_detours = max_detours;
  return c;
}

DetourCandidate up(uint16_t port, bool admits = true, uint64_t queued = 0) {
  return DetourCandidate{port, PortRole::kSwitch, admits, queued};
}

TEST(DibsRules, ADetourAddsOneToTheCount) {
  DibsRules r(dibs(), 4, 1);
  const DetourCandidate c[] = {up(1), up(2)};
  const DetourDecision d = r.on_refused(5, c, 2, 0);
  EXPECT_TRUE(d.port == 1 || d.port == 2);
  EXPECT_EQ(d.detours, 6);
  EXPECT_EQ(d.reason, DropReason::kCount);
  // Nothing is counted until the port's owner enqueues it.
  EXPECT_EQ(r.counters.detours(d.port), 0u);
  r.on_detoured(d.port);
  EXPECT_EQ(r.counters.detours(d.port), 1u);
}

TEST(DibsRules, NoAdmittingPortIsADropUnderItsOwnReason) {
  DibsRules r(dibs(), 4, 1);
  const DetourCandidate c[] = {up(1, false), up(2, false), up(0)};  // 0 is the egress
  const DetourDecision d = r.on_refused(0, c, 3, 0);
  EXPECT_EQ(d.port, kNoDetour);
  EXPECT_EQ(d.reason, DropReason::kDetourNoPort);
  EXPECT_EQ(r.counters.drops(DetourDrop::kNoPort), 1u);
  EXPECT_EQ(r.counters.drops(DetourDrop::kMaxDetours), 0u);
}

TEST(DibsRules, MaxDetoursDropsAPacketThatReachedIt) {
  DibsRules r(dibs(DibsPolicy::kRandom, 2), 4, 1);
  const DetourCandidate c[] = {up(1), up(2)};
  EXPECT_NE(r.on_refused(0, c, 2, 0).port, kNoDetour);
  EXPECT_NE(r.on_refused(1, c, 2, 0).port, kNoDetour);
  for (uint8_t taken : {2, 3, 255}) {
    const DetourDecision d = r.on_refused(taken, c, 2, 0);
    EXPECT_EQ(d.port, kNoDetour);
    EXPECT_EQ(d.reason, DropReason::kDetourMaxDetours);
  }
  EXPECT_EQ(r.counters.drops(DetourDrop::kMaxDetours), 3u);
  EXPECT_EQ(r.counters.drops(DetourDrop::kNoPort), 0u);
}

// Off (0), a packet is detoured however often it was before; its count
// stays at 255 once there.
TEST(DibsRules, MaxDetoursZeroIsOffAndTheCountSaturates) {
  DibsRules r(dibs(DibsPolicy::kRandom, 0), 4, 1);
  EXPECT_EQ(r.max_detours(), 0u);
  const DetourCandidate c[] = {up(3)};
  uint8_t count = 0;
  for (int hop = 0; hop < 300; ++hop) {
    const DetourDecision d = r.on_refused(count, c, 1, 0);
    ASSERT_EQ(d.port, 3) << hop;
    count = d.detours;
  }
  EXPECT_EQ(count, 255);
  EXPECT_EQ(r.counters.drops(DetourDrop::kMaxDetours), 0u);
}

TEST(DibsRules, RefusalsAtTheOwnerAndExitsAreCounted) {
  DibsRules r(dibs(DibsPolicy::kLoadAware), 4, 1);
  EXPECT_EQ(r.policy(), DibsPolicy::kLoadAware);
  EXPECT_EQ(r.on_detour_refused(), DropReason::kDetourRefused);
  EXPECT_EQ(r.counters.drops(DetourDrop::kRefused), 1u);
  r.on_exit(0);
  r.on_exit(12);
  EXPECT_EQ(r.counters.bucket(0), 1u);
  EXPECT_EQ(r.counters.bucket(detour_bucket(12)), 1u);
}

TmPacket packet(uint32_t bytes) {
  TmPacket p;
  p.bytes = bytes;
  return p;
}

EgressPortConfig port_config() {
  EgressPortConfig cfg;
  cfg.num_queues = 1;
  cfg.queue_capacity = 256;
  cfg.rate_bps = 1'000'000'000;  // 1 Gb/s, the paper's testbed links
  return cfg;
}

// One lcore owns a host port (0) and three uplinks (1..3) in one 60 KB
// buffer (alpha 1). An incast toward the host port fills its queue to its
// dynamic threshold; what it refuses goes out of the uplinks, the ingress
// (1) included, never back to port 0; once the host port drains, packets
// are admitted there again and no longer detoured.
TEST(DibsRules, OneLcoreDetoursWhatTheHostPortRefusesUntilItDrains) {
  SharedBuffer buffer(60'000, 1.0);
  std::vector<std::unique_ptr<EgressPort>> ports;
  for (int i = 0; i < 4; ++i) ports.push_back(std::make_unique<EgressPort>(port_config(), &buffer));
  const PortRole roles[] = {PortRole::kHost, PortRole::kSwitch, PortRole::kSwitch,
                            PortRole::kSwitch};
  DibsRules rules(dibs(), 4, 99);
  uint64_t now = 0;
  auto arrive = [&](uint32_t bytes) {  // one packet toward host port 0, from uplink 1
    const TmPacket p = packet(bytes);
    if (ports[0]->enqueue(now, 0, p, true).verdict != EnqueueVerdict::kDropped) {
      rules.on_exit(0);
      return uint16_t{0};
    }
    DetourCandidate c[4];
    for (uint16_t i = 0; i < 4; ++i) {
      c[i] = {i, roles[i], detour_admits(*ports[i], 0, bytes, now), ports[i]->queued_bytes()};
    }
    const DetourDecision d = rules.on_refused(0, c, 4, 0);
    if (d.port == kNoDetour) return kNoDetour;
    EXPECT_NE(ports[d.port]->enqueue(now, 0, p, true).verdict, EnqueueVerdict::kDropped);
    rules.on_detoured(d.port);
    return d.port;
  };
  int direct = 0, detoured = 0, dropped = 0;
  for (int i = 0; i < 60; ++i) {
    const uint16_t at = arrive(1'000);
    direct += at == 0;
    detoured += at != 0 && at != kNoDetour;
    dropped += at == kNoDetour;
  }
  // Port 0 stops at its threshold (30 KB of 60 KB with alpha 1); the
  // uplinks take the rest while the buffer has room for them.
  EXPECT_EQ(direct, 30);
  EXPECT_GT(detoured, 0);
  EXPECT_EQ(direct + detoured + dropped, 60);
  EXPECT_EQ(rules.counters.detours(0), 0u);
  EXPECT_GT(rules.counters.detours(1), 0u);  // the ingress is eligible
  EXPECT_EQ(rules.counters.detours(1) + rules.counters.detours(2) + rules.counters.detours(3),
            uint64_t(detoured));
  EXPECT_EQ(rules.counters.drops(DetourDrop::kNoPort), uint64_t(dropped));
  // Over the next millisecond, at 1 Gb/s (125 KB of line time), every queue
  // drains at its shaper's pace.
  TmPacket out[256];
  for (int step = 0; step < 100; ++step) {
    now += 10'000;
    for (auto& p : ports) p->dequeue_burst(now, out, 256);
  }
  EXPECT_EQ(buffer.used(), 0u);
  EXPECT_EQ(arrive(1'000), 0);
  EXPECT_EQ(rules.counters.bucket(0), uint64_t(direct) + 1);
}

// Two lcores: A owns host port 0 and uplink 1 (one buffer), B owns uplinks
// 2 and 3 (its own buffer). A's buffer is full, so its own uplink refuses
// too; A chooses among B's ports from the snapshots B published, and B runs
// the ordinary admission again on arrival. A snapshot older than B's last
// enqueue can admit what B then refuses: detour_refused.
TEST(DibsRules, AcrossLcoresTheOwnerAdmitsAgainAndRefusesWhatItsSnapshotMissed) {
  SharedBuffer buffer_a(10'000, 1.0), buffer_b(10'000, 1.0);
  EgressPort host(port_config(), &buffer_a), up1(port_config(), &buffer_a);
  EgressPort up2(port_config(), &buffer_b), up3(port_config(), &buffer_b);
  DibsRules rules_a(dibs(DibsPolicy::kLoadAware), 4, 1), rules_b(dibs(), 4, 2);
  PortSnapshot snap[4];  // B writes 2 and 3
  uint64_t now = 0;
  for (int i = 0; i < 5; ++i) host.enqueue(now, 0, packet(1'000), false);
  for (int i = 0; i < 5; ++i) up1.enqueue(now, 0, packet(1'000), false);  // A's buffer full
  up3.enqueue(now, 0, packet(1'000), false);
  // B's loop iteration publishes.
  publish_snapshot(up2, now, 0, &snap[2]);
  publish_snapshot(up3, now, 0, &snap[3]);
  // A: refused at the host port; its own uplink refuses (same full buffer).
  ASSERT_EQ(host.enqueue(now, 0, packet(1'000), false).verdict, EnqueueVerdict::kDropped);
  const DetourCandidate c[] = {
      {1, PortRole::kSwitch, detour_admits(up1, 0, 1'000, now), up1.queued_bytes()},
      {2, PortRole::kSwitch, snap[2].admits(1'000), snap[2].queued_bytes()},
      {3, PortRole::kSwitch, snap[3].admits(1'000), snap[3].queued_bytes()},
  };
  EXPECT_FALSE(c[0].admits);
  const DetourDecision d = rules_a.on_refused(0, c, 3, 0);
  ASSERT_EQ(d.port, 2);  // load_aware: B's emptier uplink
  // On B, after the ring: admitted again by the ordinary test.
  now += 500;
  ASSERT_TRUE(detour_admits(up2, 0, 1'000, now));
  EXPECT_NE(up2.enqueue(now, 0, packet(1'000), true).verdict, EnqueueVerdict::kDropped);
  rules_b.on_detoured(2);
  EXPECT_EQ(rules_b.counters.detours(2), 1u);
  // B fills up2 before its next publication; A still sees the old room.
  while (up2.enqueue(now, 0, packet(1'000), false).verdict != EnqueueVerdict::kDropped) {
  }
  EXPECT_TRUE(snap[2].admits(1'000));
  EXPECT_FALSE(detour_admits(up2, 0, 1'000, now));
  EXPECT_EQ(rules_b.on_detour_refused(), DropReason::kDetourRefused);
  EXPECT_EQ(rules_b.counters.drops(DetourDrop::kRefused), 1u);
  // B's next publication closes the port to A.
  publish_snapshot(up2, now, 0, &snap[2]);
  EXPECT_FALSE(snap[2].admits(1'000));
}

}  // namespace
}  // namespace sluice
