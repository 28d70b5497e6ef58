// The host NIC model on a simulated clock. Expected start times are worked
// out by hand: at 10 Gb/s a 1000-byte frame plus 24 bytes of overhead takes
// 8192 bits = 819.2 ns; at 1 Gb/s a 101-byte frame plus 24 takes 1000 ns and
// one pause quantum is 512 ns.
#include "lib/emulator/nic/host_nic.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <array>
#include <deque>
#include <span>
#include <vector>

#include "lib/control/control_frame.h"
#include "lib/mechanisms/pfc/pause_frame.h"

namespace sluice {
namespace {

constexpr uint64_t k1G = 1'000'000'000;
constexpr uint64_t k10G = 10'000'000'000;
const MacAddr kSwitchMac = {2, 0, 0, 0, 0, 9};
const MacAddr kHostMac = {2, 0, 0, 0, 0, 1};

HostNicConfig nic_config(uint64_t rate, uint32_t queues = 1, bool bfc = false) {
  HostNicConfig c;
  c.rate_bps = rate;
  c.overhead_bytes = 24;
  c.queues = queues;
  c.bfc = bfc;
  return c;
}

// A frame the application hands over at `due`, to destination `key`.
struct Out {
  uint64_t due;
  uint64_t key;
  uint8_t priority = 0;
  uint32_t bytes = 101;
  uint32_t dst = 0;   // IPv4 destination (0: not IPv4)
  uint32_t rank = 0;  // read by a NIC that serves by rank
};

struct Sent {
  uint32_t id;
  uint64_t start_ns, polled_ns;
  uint32_t queue;
  bool operator==(const Sent&) const = default;
};

// Drives the NIC as the capture port does: every `step` ns a poll, the due
// frames handed over in order while there is room, then whatever it sends.
class Host {
 public:
  explicit Host(const HostNicConfig& c) : nic(c) {}
  void add(const Out& o) { waiting.push_back(o); }
  void run_to(uint64_t end_ns, uint64_t step = 100) {
    for (; now <= end_ns; now += step) {
      nic.poll(now);
      while (next < waiting.size() && waiting[next].due <= now && !nic.full()) {
        const Out& o = waiting[next];
        nic.enqueue(
            o.key, NicFrame{o.due, static_cast<uint32_t>(next), o.bytes, o.priority, o.dst, o.rank},
            now);
        ++next;
      }
      HostNic::Pick p;
      while (nic.pick(now, &p)) {
        sent.push_back({p.frame.id, p.start_ns, now, p.queue});
        nic.sent(p);
      }
    }
  }
  std::vector<uint32_t> order() const {
    std::vector<uint32_t> ids;
    for (const Sent& s : sent) ids.push_back(s.id);
    return ids;
  }
  std::vector<uint64_t> starts() const {
    std::vector<uint64_t> v;
    for (const Sent& s : sent) v.push_back(s.start_ns);
    return v;
  }

  HostNic nic;
  std::vector<Out> waiting;
  size_t next = 0;
  uint64_t now = 0;
  std::vector<Sent> sent;
};

std::array<uint8_t, 64> bfc_frame(ControlType type, uint8_t shard, uint16_t queue) {
  std::array<uint8_t, 64> f{};
  if (type == ControlType::kBfcPause)
    build_bfc_pause(f.data(), 64, kHostMac, kSwitchMac, shard, queue);
  else
    build_bfc_resume(f.data(), 64, kHostMac, kSwitchMac, shard, queue);
  return f;
}

std::array<uint8_t, 64> bitmap_frame(uint8_t shard, uint64_t paused) {
  std::array<uint8_t, 64> f{};
  const uint64_t words[1] = {paused};
  build_bfc_bitmap(f.data(), 64, kHostMac, kSwitchMac, shard, words, 64);
  return f;
}

std::array<uint8_t, 64> pause_frame(uint16_t quanta) {
  std::array<uint8_t, 64> f{};
  build_pause_frame(f.data(), 64, kSwitchMac, quanta);
  return f;
}

std::array<uint8_t, 64> pfc_frame(uint8_t enable, uint16_t quanta) {
  std::array<uint8_t, 64> f{};
  std::array<uint16_t, kPfcClasses> q{};
  q.fill(quanta);
  build_pfc_frame(f.data(), 64, kSwitchMac, enable, q);
  return f;
}

HostNicConfig floodgate_config(uint32_t queues, uint32_t capacity = 256) {
  HostNicConfig c = nic_config(k1G, queues);
  c.floodgate = true;
  c.dst_pause_capacity = capacity;
  return c;
}

// An FG_DST_PAUSE frame (pause or resume per entry); big enough for 180 entries.
std::vector<uint8_t> dst_pause_frame(const std::vector<DstPauseEntry>& entries) {
  std::vector<uint8_t> f(1514);
  const ControlListFrame built =
      build_fg_dst_pause(f.data(), static_cast<uint32_t>(f.size()), 1500, kHostMac, kSwitchMac, 0,
                         std::span<const DstPauseEntry>(entries));
  EXPECT_EQ(built.consumed, entries.size());
  f.resize(built.len);
  return f;
}

HostFrame receive(HostNic& nic, uint64_t at_ns, const std::vector<uint8_t>& f) {
  return nic.receive(at_ns, f.data(), static_cast<uint32_t>(f.size()));
}

constexpr uint32_t kDstA = 0x0A000002;  // 10.0.0.2
constexpr uint32_t kDstB = 0x0A000003;  // 10.0.0.3
constexpr uint32_t kDstC = 0x0A000004;  // 10.0.0.4

// Exact fabric time drives the NIC only at the instants next_due_ns() (or
// the application's next frame) names. It must send exactly what a poll
// every nanosecond sends, at the same instants.
struct Received {
  uint64_t at_ns;
  std::vector<uint8_t> frame;
};

std::vector<Sent> run_polled(const HostNicConfig& c, const std::vector<Out>& out,
                             const std::vector<Received>& rx, uint64_t end_ns) {
  Host h(c);
  for (const Out& o : out) h.add(o);
  for (const Received& r : rx)
    h.nic.receive(r.at_ns, r.frame.data(), static_cast<uint32_t>(r.frame.size()));
  h.run_to(end_ns, 1);
  return h.sent;
}

std::vector<Sent> run_exact(const HostNicConfig& c, const std::vector<Out>& out,
                            const std::vector<Received>& rx, uint64_t end_ns, int* steps) {
  Host h(c);
  for (const Out& o : out) h.add(o);
  for (const Received& r : rx)
    h.nic.receive(r.at_ns, r.frame.data(), static_cast<uint32_t>(r.frame.size()));
  *steps = 0;
  while (h.now <= end_ns) {
    h.run_to(h.now, 1);  // one instant: poll, hand over, send (now advances by 1)
    ++*steps;
    uint64_t next = h.nic.next_due_ns(h.now - 1);
    if (h.next < h.waiting.size() && !h.nic.full()) next = std::min(next, h.waiting[h.next].due);
    if (next == UINT64_MAX) break;
    EXPECT_GE(next, h.now - 1);
    h.now = std::max(next, h.now);
  }
  return h.sent;
}

std::vector<uint8_t> as_vector(const std::array<uint8_t, 64>& f) { return {f.begin(), f.end()}; }

TEST(HostNic, NextDueMatchesPollingEveryNanosecond) {
  std::vector<Out> out;
  for (uint64_t due : {0, 0, 0, 500, 10'000, 10'000, 30'000}) out.push_back({due, 7});
  out.push_back({2'000, 9, 3});   // class 3
  out.push_back({2'000, 11, 0});  // class 0
  out.push_back({40'000, 13, 0, 101, kDstA});
  out.push_back({40'000, 13, 0, 101, kDstA});
  out.push_back({40'000, 15, 0, 101, kDstB});
  HostNicConfig c = floodgate_config(4);
  const std::vector<Received> rx = {
      {1'500, as_vector(pause_frame(4))},          // PAUSE runs out at 3548
      {2'100, as_vector(pfc_frame(1u << 3, 20))},  // class 3 for 10.24 us
      {5'000, as_vector(pfc_frame(1u << 3, 0))},   // ... resumed early by XON
      {40'000, dst_pause_frame({{kDstA, true}})}, {47'000, dst_pause_frame({{kDstA, false}})},
  };
  const std::vector<Sent> polled = run_polled(c, out, rx, 60'000);
  int steps = 0;
  const std::vector<Sent> exact = run_exact(c, out, rx, 60'000, &steps);
  ASSERT_EQ(polled.size(), out.size());
  // The same frames at the same start times; polled_ns is when each went.
  ASSERT_EQ(exact.size(), polled.size());
  for (size_t i = 0; i < polled.size(); ++i) {
    EXPECT_EQ(exact[i].id, polled[i].id) << i;
    EXPECT_EQ(exact[i].start_ns, polled[i].start_ns) << i;
    EXPECT_EQ(exact[i].polled_ns, polled[i].polled_ns) << i;  // never late
  }
  EXPECT_LT(steps, 40);  // a handful of instants, not 60'000 polls
}

TEST(HostNic, NothingDueWhenEmptyOrHeldUntilAFrame) {
  HostNic nic(nic_config(k1G, 2, true));
  nic.poll(0);
  EXPECT_EQ(nic.next_due_ns(0), UINT64_MAX);
  nic.enqueue(1, NicFrame{0, 0, 101, 0, 0}, 0);
  EXPECT_EQ(nic.next_due_ns(0), 0u);
  const auto pause = bfc_frame(ControlType::kBfcPause, 0, 0);
  nic.receive(10, pause.data(), 64);
  EXPECT_EQ(nic.next_due_ns(0), 0u);  // the frame may still go before the pause acts
  nic.poll(10);
  EXPECT_EQ(nic.next_due_ns(10), UINT64_MAX);  // held until a resume arrives
  const auto resume = bfc_frame(ControlType::kBfcResume, 0, 0);
  nic.receive(500, resume.data(), 64);
  EXPECT_EQ(nic.next_due_ns(10), 500u);  // the resume takes effect then
}

TEST(HostNic, FramesDueAtOnceLeaveSpacedBySerialisationTime) {
  Host h(nic_config(k10G));
  for (int i = 0; i < 6; ++i) h.add({0, 1, 0, 1000});
  h.add({10'000, 1, 0, 1000});
  h.run_to(12'000, 1);
  // k * 819.2 ns rounded up: the wire time is kept exactly, so the error never grows.
  EXPECT_EQ(h.starts(), (std::vector<uint64_t>{0, 820, 1639, 2458, 3277, 4096, 10'000}));
}

TEST(HostNic, LongRunRateIsExact) {
  Host h(nic_config(k10G));
  for (int i = 0; i < 10'001; ++i) h.add({0, 1, 0, 1000});
  h.run_to(8'192'000, 1000);
  ASSERT_EQ(h.sent.size(), 10'001u);
  EXPECT_EQ(h.sent.back().start_ns, 8'192'000u);  // 10'000 frames x 819.2 ns, exactly
}

TEST(HostNic, DestinationsTakeTurns) {
  Host h(nic_config(k1G, 4));
  for (uint32_t i = 0; i < 3; ++i) h.add({0, 100});  // ids 0-2 to destination 100
  for (uint32_t i = 0; i < 3; ++i) h.add({0, 200});  // ids 3-5 to destination 200
  h.run_to(10'000);
  EXPECT_EQ(h.order(), (std::vector<uint32_t>{0, 3, 1, 4, 2, 5}));
  EXPECT_EQ(h.starts(), (std::vector<uint64_t>{0, 1000, 2000, 3000, 4000, 5000}));
}

// pFabric's hosts: the queue whose head has the smallest rank goes next,
// decided when the wire falls free (a frame handed over meanwhile counts).
TEST(HostNic, ByRankSmallestHeadGoesWhenTheWireIsFree) {
  HostNicConfig c = nic_config(k1G, 4);
  c.by_rank = true;
  Host h(c);
  h.add({0, 1, 0, 101, 0, 500});    // id 0
  h.add({0, 2, 0, 101, 0, 100});    // id 1
  h.add({0, 3, 0, 101, 0, 300});    // id 2
  h.add({1500, 4, 0, 101, 0, 50});  // id 3, during id 2's frame
  h.run_to(10'000);
  EXPECT_EQ(h.order(), (std::vector<uint32_t>{1, 2, 3, 0}));
  EXPECT_EQ(h.starts(), (std::vector<uint64_t>{0, 1000, 2000, 3000}));
  // Without by_rank the same frames take turns.
  Host rr(nic_config(k1G, 4));
  for (const Out& o : h.waiting) rr.add(o);
  rr.run_to(10'000);
  EXPECT_EQ(rr.order(), (std::vector<uint32_t>{0, 1, 2, 3}));
}

TEST(HostNic, ByRankTiesGoToTheFrameHandedOverFirst) {
  HostNicConfig c = nic_config(k1G, 4);
  c.by_rank = true;
  Host h(c);
  h.add({0, 1, 0, 101, 0, 900});  // id 0: occupies the wire until 1000
  h.add({300, 2, 0, 101, 0, 0});  // id 1, queue 1
  h.add({200, 3, 0, 101, 0, 0});  // id 2, queue 2: same rank, due earlier
  h.run_to(10'000, 100);
  EXPECT_EQ(h.order(), (std::vector<uint32_t>{0, 2, 1}));
  Host t(c);
  t.add({0, 1, 0, 101, 0, 900});
  t.add({200, 2, 0, 101, 0, 0});  // id 1, queue 1, due earlier
  t.add({300, 3, 0, 101, 0, 0});  // id 2, queue 2
  t.run_to(10'000, 100);
  EXPECT_EQ(t.order(), (std::vector<uint32_t>{0, 1, 2}));
  // Within a queue, frames keep their order whatever their ranks.
  Host q(c);
  q.add({0, 5, 0, 101, 0, 700});  // id 0
  q.add({0, 5, 0, 101, 0, 10});   // id 1, behind id 0 in queue 5's
  q.add({0, 6, 0, 101, 0, 600});  // id 2
  q.run_to(10'000);
  EXPECT_EQ(q.order(), (std::vector<uint32_t>{2, 0, 1}));
}

TEST(HostNic, ByRankStillHonoursPfc) {
  HostNicConfig c = nic_config(k1G, 4);
  c.by_rank = true;
  Host h(c);
  h.add({0, 1, 3, 101, 0, 1});    // id 0, class 3: ranks first but is paused
  h.add({0, 2, 0, 101, 0, 900});  // id 1, class 0
  const auto pause3 = pfc_frame(1u << 3, 0xFFFF);
  const auto xon3 = pfc_frame(1u << 3, 0);
  EXPECT_EQ(h.nic.receive(0, pause3.data(), 60), HostFrame::kPfc);
  EXPECT_EQ(h.nic.receive(5000, xon3.data(), 60), HostFrame::kPfc);
  h.run_to(10'000);
  EXPECT_EQ(h.order(), (std::vector<uint32_t>{1, 0}));
  EXPECT_EQ(h.starts(), (std::vector<uint64_t>{0, 5000}));
}

TEST(HostNic, PausedBacklogLeavesAtLineRateFromThePauseEnd) {
  Host h(nic_config(k1G, 4));
  for (uint64_t due : {0, 0, 0, 500, 10'000, 10'000}) h.add({due, 7});
  // 4 quanta at 1 Gb/s, received at 1500: paused [1500, 3548).
  const auto f = pause_frame(4);
  EXPECT_EQ(h.nic.receive(1500, f.data(), 60), HostFrame::kPause);
  h.run_to(20'000);
  const std::vector<Sent> expected = {{0, 0, 0, 0},           {1, 1000, 1000, 0},
                                      {2, 3548, 3600, 0},     {3, 4548, 4600, 0},
                                      {4, 10'000, 10'000, 1}, {5, 11'000, 11'000, 1}};
  // (Queue 0 was empty and past its sticky time by 10'000: the next free queue.)
  EXPECT_EQ(h.sent, expected);
  EXPECT_EQ(h.nic.class_paused_ns(HostNic::kPauseSlot, 20'000), 2048u);
}

TEST(HostNic, PfcHoldsOnlyItsClass) {
  Host h(nic_config(k1G, 4));
  h.add({0, 1, 3});  // id 0, class 3
  h.add({0, 2, 0});  // id 1, class 0
  h.add({0, 1, 3});  // id 2, class 3
  h.add({0, 2, 0});  // id 3, class 0
  const auto pause3 = pfc_frame(1u << 3, 0xFFFF);
  const auto xon3 = pfc_frame(1u << 3, 0);
  EXPECT_EQ(h.nic.receive(0, pause3.data(), 60), HostFrame::kPfc);
  EXPECT_EQ(h.nic.receive(6000, xon3.data(), 60), HostFrame::kPfc);
  h.run_to(10'000);
  // Class 0 goes at line rate; class 3 waits for the XON at 6000.
  EXPECT_EQ(h.order(), (std::vector<uint32_t>{1, 3, 0, 2}));
  EXPECT_EQ(h.starts(), (std::vector<uint64_t>{0, 1000, 6000, 7000}));
  EXPECT_EQ(h.nic.class_paused_ns(3, 10'000), 6000u);
  EXPECT_EQ(h.nic.class_paused_ns(0, 10'000), 0u);
}

TEST(HostNic, FutureFramesTakeEffectInTimeOrder) {
  Host h(nic_config(k1G));
  const auto p = pause_frame(2);  // 1024 ns
  h.nic.receive(10'000, p.data(), 60);
  h.nic.receive(20'000, p.data(), 60);
  h.add({9'500, 1});
  h.add({10'500, 1});
  h.add({20'000, 1});
  h.run_to(30'000);
  EXPECT_EQ(h.starts(), (std::vector<uint64_t>{9'500, 11'024, 21'024}));
  EXPECT_EQ(h.nic.class_paused_ns(HostNic::kPauseSlot, 30'000), 2048u);
}

TEST(HostNic, FrameStampedBeforeTheLastPollCountsFromThatPoll) {
  HostNic nic(nic_config(k1G));
  nic.poll(500);
  nic.pause_port(300, 1000);  // would have ended at 1300; counts as received at 500
  nic.poll(1499);
  EXPECT_EQ(nic.class_paused_ns(HostNic::kPauseSlot, 1499), 999u);
  nic.poll(2000);
  EXPECT_EQ(nic.class_paused_ns(HostNic::kPauseSlot, 2000), 1000u);
}

TEST(HostNic, ManyPendingFramesAreAllApplied) {
  HostNic nic(nic_config(k1G));
  // 100 pauses ahead of the clock, 100 ns each, 1000 ns apart: more than are held pending.
  for (uint64_t i = 0; i < 100; ++i) nic.pause_port(1000 * (i + 1), 100);
  for (uint64_t t = 0; t <= 101'000; t += 50) nic.poll(t);
  EXPECT_EQ(nic.class_paused_ns(HostNic::kPauseSlot, 101'000), 10'000u);
}

TEST(HostNic, BfcPauseHoldsOneQueueUntilResumed) {
  Host h(nic_config(k1G, 4, true));
  h.add({0, 100});  // id 0 -> queue 0
  h.add({0, 200});  // id 1 -> queue 1
  h.add({0, 100});
  h.add({0, 200});
  const auto pause = bfc_frame(ControlType::kBfcPause, 5, 0);
  const auto resume = bfc_frame(ControlType::kBfcResume, 5, 0);
  EXPECT_EQ(h.nic.receive(500, pause.data(), 60), HostFrame::kBfc);
  EXPECT_EQ(h.nic.receive(8000, resume.data(), 60), HostFrame::kBfc);
  h.run_to(12'000);
  // Queue 0 sent id 0 before the pause reached the host, then waited for the resume.
  const std::vector<Sent> expected = {
      {0, 0, 0, 0}, {1, 1000, 1000, 1}, {3, 2000, 2000, 1}, {2, 8000, 8000, 0}};
  EXPECT_EQ(h.sent, expected);
  EXPECT_EQ(h.nic.bfc_paused_mask(), 0u);
}

TEST(HostNic, BfcQueueIsPausedWhileAnyShardHoldsIt) {
  HostNic nic(nic_config(k1G, 4, true));
  for (uint8_t shard : {1, 63}) {
    const auto f = bfc_frame(ControlType::kBfcPause, shard, 2);
    nic.receive(100, f.data(), 60);
  }
  nic.poll(100);
  EXPECT_EQ(nic.bfc_paused_mask(), 0b100u);
  const auto r1 = bfc_frame(ControlType::kBfcResume, 1, 2);
  nic.receive(200, r1.data(), 60);
  nic.poll(200);
  EXPECT_EQ(nic.bfc_paused_mask(), 0b100u) << "shard 63 still holds it";
  // A lost resume from shard 63: its next bitmap (nothing paused) repairs it.
  const auto bitmap = bitmap_frame(63, 0);
  EXPECT_EQ(nic.receive(300, bitmap.data(), 60), HostFrame::kBfc);
  nic.poll(300);
  EXPECT_EQ(nic.bfc_paused_mask(), 0u);
  // A bitmap pauses what it names; a queue beyond the NIC's is ignored, counted.
  const auto b2 = bitmap_frame(0, (uint64_t{1} << 1) | (uint64_t{1} << 40));
  nic.receive(400, b2.data(), 60);
  nic.poll(400);
  EXPECT_EQ(nic.bfc_paused_mask(), 0b10u);
  EXPECT_EQ(nic.bfc_unknown_queue_bitmaps(), 1u);
  // A pause of a queue the NIC lacks, or from shard 64, changes nothing and is counted.
  const auto bad_queue = bfc_frame(ControlType::kBfcPause, 0, 9);
  const auto bad_shard = bfc_frame(ControlType::kBfcPause, 64, 0);
  nic.receive(500, bad_queue.data(), 60);
  nic.receive(500, bad_shard.data(), 60);
  nic.poll(500);
  EXPECT_EQ(nic.bfc_paused_mask(), 0b10u);
  EXPECT_EQ(nic.bfc_invalid(), 2u);
}

// An RDMA NIC's queue per flow: 4096 flows, each in its own queue, taken in
// round robin; BFC holds single queues among them by pause and by a bitmap
// of all 4096 (a 536-byte frame), and a later bitmap repairs a lost resume.
TEST(HostNic, FourThousandQueuesEachPausedAlone) {
  HostNicConfig c = nic_config(k10G, 4096, true);
  c.capacity = 8192;
  Host h(c);
  for (uint32_t i = 0; i < 4096; ++i) h.add({0, 100'000 + uint64_t{i}, 0, 1000});
  auto wide_bitmap = [](uint8_t shard, std::initializer_list<uint32_t> paused) {
    std::vector<uint64_t> words(64);
    for (uint32_t q : paused) words[q / 64] |= uint64_t{1} << (q % 64);
    std::vector<uint8_t> f(bfc_bitmap_len(4096));
    EXPECT_EQ(build_bfc_bitmap(f.data(), static_cast<uint32_t>(f.size()), kHostMac, kSwitchMac,
                               shard, words.data(), 4096),
              536u);
    return f;
  };
  const auto pause = bfc_frame(ControlType::kBfcPause, 0, 3000);
  const auto held = wide_bitmap(1, {10, 4000});
  const auto repair = wide_bitmap(0, {});
  const auto release = wide_bitmap(1, {4000});
  EXPECT_EQ(h.nic.receive(100, pause.data(), 60), HostFrame::kBfc);
  EXPECT_EQ(h.nic.receive(200, held.data(), 536), HostFrame::kBfc);
  EXPECT_EQ(h.nic.receive(1'000'000, repair.data(), 536), HostFrame::kBfc);
  EXPECT_EQ(h.nic.receive(2'000'000, release.data(), 536), HostFrame::kBfc);
  h.run_to(1'000);
  EXPECT_EQ(h.nic.bfc_paused_count(), 3u);
  EXPECT_EQ(h.nic.bfc_paused_mask(), uint64_t{1} << 10);
  h.run_to(4'000'000, 1000);
  ASSERT_EQ(h.sent.size(), 4095u) << "every flow but the one still held";
  std::vector<uint64_t> start_of(4096, UINT64_MAX);
  for (const Sent& s : h.sent) {
    EXPECT_EQ(s.queue, s.id) << "flow i has queue i";
    start_of[s.queue] = s.start_ns;
  }
  EXPECT_GE(start_of[3000], 1'000'000u) << "held until the repairing bitmap";
  EXPECT_GE(start_of[10], 2'000'000u) << "held until shard 1 let it go";
  EXPECT_EQ(start_of[4000], UINT64_MAX);
  // The others went in round robin, queue order, back to back.
  std::vector<uint32_t> others;
  for (const Sent& s : h.sent)
    if (s.queue != 10 && s.queue != 3000) others.push_back(s.queue);
  EXPECT_TRUE(std::is_sorted(others.begin(), others.end()));
  EXPECT_EQ(h.nic.bfc_paused_count(), 1u);
  EXPECT_EQ(h.nic.bfc_paused_mask(), 0u);
  EXPECT_EQ(h.nic.queues().collisions.get(), 0u);
}

TEST(HostNic, APausedFlowNeverEscapesToAnotherQueue) {
  HostNicConfig c = nic_config(k1G, 4, true);
  c.sticky_ns = 0;
  Host h(c);
  h.add({0, 100});     // id 0 -> queue 0, sent at 0: the queue is empty again
  h.add({3000, 100});  // id 1: queue 0 is paused by then, empty but still 100's
  h.add({3000, 300});  // id 2 -> another queue
  const auto pause = bfc_frame(ControlType::kBfcPause, 0, 0);
  const auto resume = bfc_frame(ControlType::kBfcResume, 0, 0);
  h.nic.receive(2000, pause.data(), 60);
  h.nic.receive(9000, resume.data(), 60);
  h.run_to(12'000);
  const std::vector<Sent> expected = {{0, 0, 0, 0}, {2, 3000, 3000, 1}, {1, 9000, 9000, 0}};
  EXPECT_EQ(h.sent, expected);
}

TEST(HostNic, AHeldFrameIsDelayedNeverDroppedAndAFullNicMakesTheSenderWait) {
  HostNicConfig c = nic_config(k1G, 2, true);
  c.capacity = 3;
  Host h(c);
  for (int i = 0; i < 6; ++i) h.add({0, 100});
  const auto pause = bfc_frame(ControlType::kBfcPause, 0, 0);
  const auto resume = bfc_frame(ControlType::kBfcResume, 0, 0);
  h.nic.receive(0, pause.data(), 60);
  h.nic.receive(5000, resume.data(), 60);
  h.run_to(4900);
  EXPECT_TRUE(h.sent.empty());
  EXPECT_TRUE(h.nic.full());
  EXPECT_EQ(h.next, 3u) << "the other three wait in the application";
  h.run_to(20'000);
  EXPECT_EQ(h.order(), (std::vector<uint32_t>{0, 1, 2, 3, 4, 5}));
  EXPECT_EQ(h.sent.front().start_ns, 5000u);
}

TEST(HostNic, BfcFramesAreIgnoredUnlessTheNicIsABfcNic) {
  HostNic nic(nic_config(k1G, 4, false));
  const auto f = bfc_frame(ControlType::kBfcPause, 0, 0);
  EXPECT_EQ(nic.receive(0, f.data(), 60), HostFrame::kOther);
  nic.poll(0);
  EXPECT_EQ(nic.bfc_paused_mask(), 0u);
}

TEST(HostNic, ReceiveRecognisesOnlyWellFormedControlFrames) {
  HostNic nic(nic_config(k10G, 1, true));
  auto f = pause_frame(100);
  EXPECT_EQ(nic.receive(0, f.data(), 17), HostFrame::kInvalid) << "body too short";
  EXPECT_EQ(nic.receive(0, f.data(), 13), HostFrame::kOther) << "no type";
  auto other = f;
  other[5] = 0x02;  // another reserved address
  EXPECT_EQ(nic.receive(0, other.data(), 60), HostFrame::kOther);
  other = f;
  other[15] = 0x02;  // opcode 0x0002 (GATE)
  EXPECT_EQ(nic.receive(0, other.data(), 60), HostFrame::kInvalid);
  other = f;
  other[12] = 0x81;  // VLAN-tagged: not a MAC Control frame
  other[13] = 0x00;
  EXPECT_EQ(nic.receive(0, other.data(), 60), HostFrame::kOther);
  auto b = bfc_frame(ControlType::kBfcPause, 0, 0);
  b[14] = 'X';  // bad magic
  EXPECT_EQ(nic.receive(0, b.data(), 60), HostFrame::kInvalid);
  nic.poll(1);
  EXPECT_EQ(nic.class_paused_ns(HostNic::kPauseSlot, 1), 0u);
  EXPECT_EQ(nic.bfc_paused_mask(), 0u);
  // The PAUSE time is quanta of 512 bit times at the NIC's rate: 100 x 51.2 ns.
  EXPECT_EQ(nic.receive(10, f.data(), 60), HostFrame::kPause);
  nic.poll(100'000);
  EXPECT_EQ(nic.class_paused_ns(HostNic::kPauseSlot, 100'000), 5120u);
}

TEST(HostNic, DstPauseHoldsOnlyThatDestinationUntilItsResume) {
  Host h(floodgate_config(4));
  for (int i = 0; i < 3; ++i) h.add({0, kDstA, 0, 101, kDstA});  // ids 0-2 -> queue 0
  for (int i = 0; i < 6; ++i) h.add({0, kDstB, 0, 101, kDstB});  // ids 3-8 -> queue 1
  EXPECT_EQ(receive(h.nic, 500, dst_pause_frame({{kDstA, true}})), HostFrame::kDstPause);
  h.run_to(4000);
  EXPECT_EQ(h.nic.dst_paused(), 1u);
  // The resume lands between two polls (8000, 8100): the backlog counts from it.
  EXPECT_EQ(receive(h.nic, 8050, dst_pause_frame({{kDstA, false}})), HostFrame::kDstPause);
  h.run_to(12'000);
  // A sent id 0 before the pause reached the host; B kept the line busy at
  // line rate; A's backlog waited for the resume, then went at line rate.
  const std::vector<Sent> expected = {{0, 0, 0, 0},       {3, 1000, 1000, 1}, {4, 2000, 2000, 1},
                                      {5, 3000, 3000, 1}, {6, 4000, 4000, 1}, {7, 5000, 5000, 1},
                                      {8, 6000, 6000, 1}, {1, 8050, 8100, 0}, {2, 9050, 9100, 0}};
  EXPECT_EQ(h.sent, expected);
  EXPECT_EQ(h.nic.dst_paused(), 0u);
  EXPECT_EQ(h.nic.dst_paused_ns(12'000), 7550u);
  const DstPauseState& st = *h.nic.dst_pause_state();
  EXPECT_EQ(st.frames.get(), 2u);
  EXPECT_EQ(st.pauses.get(), 1u);
  EXPECT_EQ(st.resumes.get(), 1u);
  EXPECT_EQ(st.invalid.get(), 0u);
}

TEST(HostNic, DstPauseStampedInTheFutureDoesNotActEarly) {
  Host h(floodgate_config(4));
  for (uint64_t due : {0, 2000, 4000, 6000}) h.add({due, kDstA, 0, 101, kDstA});
  // A departure time ahead of the clock, received before anything runs.
  receive(h.nic, 5000, dst_pause_frame({{kDstA, true}}));
  receive(h.nic, 9000, dst_pause_frame({{kDstA, false}}));
  h.run_to(4900);
  EXPECT_EQ(h.nic.dst_paused(), 0u) << "not paused before 5000";
  EXPECT_EQ(h.starts(), (std::vector<uint64_t>{0, 2000, 4000}));
  h.run_to(8900);
  EXPECT_EQ(h.nic.dst_paused(), 1u);
  EXPECT_EQ(h.sent.size(), 3u);
  h.run_to(10'000);
  EXPECT_EQ(h.starts(), (std::vector<uint64_t>{0, 2000, 4000, 9000}));
}

TEST(HostNic, ManyDstPauseEntriesInOneFrameAllWaitForTheirTime) {
  Host h(floodgate_config(4));
  // 180 destinations in one frame, more than the other events' pending ring.
  std::vector<DstPauseEntry> pause;
  for (uint32_t i = 0; i < 180; ++i) pause.push_back({kDstA + i, true});
  EXPECT_EQ(receive(h.nic, 3000, dst_pause_frame(pause)), HostFrame::kDstPause);
  h.add({1000, kDstA + 179, 0, 101, kDstA + 179});
  h.add({4000, kDstA + 179, 0, 101, kDstA + 179});
  h.run_to(2900);
  EXPECT_EQ(h.nic.dst_paused(), 0u);
  h.run_to(5000);
  EXPECT_EQ(h.nic.dst_paused(), 180u);
  EXPECT_EQ(h.starts(), (std::vector<uint64_t>{1000})) << "the last entry holds too";
}

TEST(HostNic, MalformedDstPauseIsCountedAndChangesNothing) {
  Host h(floodgate_config(4));
  auto bad_len = dst_pause_frame({{kDstA, true}});
  bad_len[19] += 1;  // body length one byte beyond what one entry needs
  EXPECT_EQ(receive(h.nic, 0, bad_len), HostFrame::kInvalid);
  // A zero address anywhere spoils the whole frame: the good entry does not act.
  EXPECT_EQ(receive(h.nic, 0, dst_pause_frame({{kDstA, true}, {0, true}})), HostFrame::kInvalid);
  auto bad_magic = dst_pause_frame({{kDstA, true}});
  bad_magic[14] = 'X';
  EXPECT_EQ(receive(h.nic, 0, bad_magic), HostFrame::kInvalid);
  h.add({0, kDstA, 0, 101, kDstA});
  h.run_to(1000);
  EXPECT_EQ(h.starts(), (std::vector<uint64_t>{0}));
  EXPECT_EQ(h.nic.dst_paused(), 0u);
  const DstPauseState& st = *h.nic.dst_pause_state();
  EXPECT_EQ(st.invalid.get(), 3u);
  EXPECT_EQ(st.frames.get(), 0u);
  EXPECT_EQ(st.pauses.get(), 0u);
}

TEST(HostNic, DstPauseActsOnlyOnAFloodgateNic) {
  const auto f = dst_pause_frame({{kDstA, true}});
  for (bool bfc : {false, true}) {
    HostNic nic(nic_config(k1G, 4, bfc));
    EXPECT_EQ(receive(nic, 0, f), HostFrame::kOther) << "bfc " << bfc;
    EXPECT_EQ(nic.dst_pause_state(), nullptr);
  }
  HostNic fg(floodgate_config(4));
  const auto b = bfc_frame(ControlType::kBfcPause, 0, 0);
  EXPECT_EQ(fg.receive(0, b.data(), 60), HostFrame::kOther) << "BFC to a Floodgate NIC";
  fg.poll(0);
  EXPECT_EQ(fg.bfc_paused_mask(), 0u);
}

TEST(HostNic, DstPauseHoldsEveryFlowToThatDestination) {
  HostNicConfig c = floodgate_config(4);
  Host h(c);
  // queue_by flow: keys are flows; flows 1 and 2 go to A, flow 3 to B.
  for (int i = 0; i < 2; ++i) {
    h.add({0, 1, 0, 101, kDstA});
    h.add({0, 2, 0, 101, kDstA});
    h.add({0, 3, 0, 101, kDstB});
  }
  receive(h.nic, 0, dst_pause_frame({{kDstA, true}}));
  receive(h.nic, 5000, dst_pause_frame({{kDstA, false}}));
  h.run_to(10'000);
  // Ids 2 and 5 (B) first; then A's two flows take turns from the resume.
  EXPECT_EQ(h.order(), (std::vector<uint32_t>{2, 5, 0, 1, 3, 4}));
  EXPECT_EQ(h.starts(), (std::vector<uint64_t>{0, 1000, 5000, 6000, 7000, 8000}));
  EXPECT_NE(h.sent[2].queue, h.sent[3].queue) << "two flows, two queues, both held";
}

TEST(HostNic, NonIpv4FramesAreNeverHeldByDstPause) {
  Host h(floodgate_config(4));
  receive(h.nic, 0, dst_pause_frame({{kDstA, true}}));
  h.add({0, 0, 0, 101, 0});  // not IPv4: key 0, dst 0
  h.add({0, kDstA, 0, 101, kDstA});
  h.run_to(3000);
  EXPECT_EQ(h.order(), (std::vector<uint32_t>{0}));
}

TEST(HostNic, PausesBeyondTheCapacityAreCountedNotHeld) {
  Host h(floodgate_config(4, 2));
  EXPECT_EQ(receive(h.nic, 0, dst_pause_frame({{kDstA, true}, {kDstB, true}, {kDstC, true}})),
            HostFrame::kDstPause);
  h.add({0, kDstC, 0, 101, kDstC});
  h.add({0, kDstA, 0, 101, kDstA});
  h.run_to(2000);
  EXPECT_EQ(h.order(), (std::vector<uint32_t>{0})) << "C did not fit: it keeps sending";
  EXPECT_EQ(h.nic.dst_paused(), 2u);
  EXPECT_EQ(h.nic.dst_pause_overflow(), 1u);
  // A resume makes room: C's next pause holds it.
  receive(h.nic, 2500, dst_pause_frame({{kDstB, false}, {kDstC, true}}));
  h.add({3000, kDstC, 0, 101, kDstC});
  h.run_to(5000);
  EXPECT_EQ(h.order(), (std::vector<uint32_t>{0}));
  EXPECT_EQ(h.nic.dst_paused(), 2u);
  EXPECT_EQ(h.nic.dst_pause_overflow(), 1u);
}

TEST(HostNic, DisabledNicTakesNothing) {
  HostNic nic;
  EXPECT_FALSE(nic.enabled());
  const auto f = pause_frame(100);
  EXPECT_EQ(nic.receive(0, f.data(), 60), HostFrame::kOther);
  EXPECT_FALSE(nic.full());
}

// Replies in a queue of their own (HPCC's ns-3 NIC): they go as soon as
// the wire is free, ahead of data, and leave the data's round robin where
// it was. Without it the same key is one more queue in the round robin.
TEST(HostNic, ReplyQueueGoesFirst) {
  HostNicConfig c = nic_config(k1G, 4);
  c.reply_queue = true;
  Host h(c);
  for (uint32_t i = 0; i < 3; ++i) h.add({0, 100});  // ids 0-2
  for (uint32_t i = 0; i < 3; ++i) h.add({0, 200});  // ids 3-5
  h.add({500, HostNic::kReplyKey});                  // id 6, during id 0
  h.add({500, HostNic::kReplyKey});                  // id 7
  h.run_to(10'000);
  EXPECT_EQ(h.order(), (std::vector<uint32_t>{0, 6, 7, 3, 1, 4, 2, 5}));
  EXPECT_EQ(h.sent[1].queue, 3u);
  EXPECT_EQ(h.sent[2].queue, 3u);
  Host shared(nic_config(k1G, 4));
  for (const Out& o : h.waiting) shared.add(o);
  shared.run_to(10'000);
  EXPECT_EQ(shared.order(), (std::vector<uint32_t>{0, 3, 6, 1, 4, 7, 2, 5}));
}

// Data keys never take the replies' queue, not even when they collide.
TEST(HostNic, DataKeysNeverTakeTheReplyQueue) {
  HostNicConfig c = nic_config(k1G, 2);
  c.reply_queue = true;
  Host h(c);
  h.add({0, 100});
  h.add({0, 200});
  h.add({0, 301});
  h.run_to(5'000);
  ASSERT_EQ(h.sent.size(), 3u);
  for (const Sent& s : h.sent) EXPECT_EQ(s.queue, 0u);
  EXPECT_EQ(h.nic.queues().collisions.get(), 2u);
}

// The replies' queue is outside BFC: its frames name no queue, so a
// switch never pauses it, and a pause, resume or bitmap bit naming it (a
// peer's error) holds nothing. The data queues keep their numbers.
TEST(HostNic, ReplyQueueOutsideBfc) {
  HostNicConfig c = nic_config(k1G, 4, true);
  c.reply_queue = true;
  HostNic nic(c);
  EXPECT_EQ(nic.shim_queue(0), 0u);
  EXPECT_EQ(nic.shim_queue(2), 2u);
  EXPECT_EQ(nic.shim_queue(3), kNoUpstreamQueue);
  nic.poll(0);
  const auto pause = bfc_frame(ControlType::kBfcPause, 0, 3);
  EXPECT_EQ(nic.receive(0, pause.data(), 64), HostFrame::kBfc);
  const auto bitmap = bitmap_frame(1, 0b1000);  // queue 3
  EXPECT_EQ(nic.receive(0, bitmap.data(), 64), HostFrame::kBfc);
  nic.poll(0);
  EXPECT_EQ(nic.bfc_invalid(), 1u);
  EXPECT_EQ(nic.bfc_unknown_queue_bitmaps(), 1u);
  EXPECT_EQ(nic.bfc_paused_count(), 0u);
  nic.enqueue(100, NicFrame{0, 8, 101, 0, 0}, 0);
  nic.enqueue(HostNic::kReplyKey, NicFrame{0, 7, 101, 0, 0}, 0);
  HostNic::Pick p;
  ASSERT_TRUE(nic.pick(0, &p));
  EXPECT_EQ(p.frame.id, 7u);  // the reply goes first, unheld
  EXPECT_EQ(p.queue, 3u);
  nic.sent(p);
  // A data queue is still paused and resumed by its number.
  nic.poll(1'000);
  ASSERT_TRUE(nic.pick(1'000, &p));
  EXPECT_EQ(p.frame.id, 8u);
  const auto data_queue = static_cast<uint16_t>(p.queue);
  EXPECT_LT(data_queue, 3u);
  const auto hold = bfc_frame(ControlType::kBfcPause, 0, data_queue);
  nic.receive(1'000, hold.data(), 64);
  nic.poll(2'000);
  EXPECT_FALSE(nic.pick(2'000, &p));
  const auto resume = bfc_frame(ControlType::kBfcResume, 0, data_queue);
  nic.receive(3'000, resume.data(), 64);
  nic.poll(3'000);
  ASSERT_TRUE(nic.pick(3'000, &p));
  EXPECT_EQ(p.frame.id, 8u);
}

}  // namespace
}  // namespace sluice
