// The BFC paper's fixed-rate NIC (lib/emulator/transport/rdma/fixed_rate.h), alone
// and driving the go-back-N sender, on a simulated clock.

#include <gtest/gtest.h>

#include <cstdint>
#include <memory>

#include "lib/emulator/transport/flow_transport.h"
#include "lib/emulator/transport/rdma/fixed_rate.h"
#include "lib/emulator/transport/rdma/gbn_params.h"
#include "lib/emulator/transport/rdma/gbn_sender.h"
#include "lib/emulator/transport/segment.h"

namespace sluice {
namespace {

// 100 Gb/s x 8 us = 800,000 bits = 100,000 B.
TEST(FixedRate, LineRateAndOneBdpWindowByDefault) {
  TransportContext ctx;
  FixedRate f(ctx);
  EXPECT_EQ(f.rate_bps(), 100'000'000'000u);
  EXPECT_EQ(f.window_bytes(), 100'000u);
  EXPECT_EQ(f.timer_due_ns(), kTransportNever);
}

// 25 Gb/s x 12 us = 37,500 B; 10 Gb/s x 1 ns = 1.25 B, rounded down to 1.
TEST(FixedRate, BdpFollowsTheContext) {
  TransportContext ctx;
  ctx.link_rate_bps = 25'000'000'000;
  ctx.base_rtt_ns = 12'000;
  EXPECT_EQ(FixedRate(ctx).window_bytes(), 37'500u);
  ctx.link_rate_bps = 10'000'000'000;
  ctx.base_rtt_ns = 1;
  EXPECT_EQ(FixedRate::bdp_bytes(ctx), 1u);
}

TEST(FixedRate, ConfiguredWindowNoWindowAndRate) {
  TransportContext ctx;
  EXPECT_EQ(FixedRate(ctx, 64'000).window_bytes(), 64'000u);
  FixedRate none(ctx, FixedRate::kNoWindow);
  EXPECT_EQ(none.window_bytes(), kTransportNever);
  EXPECT_EQ(none.rate_bps(), 100'000'000'000u);
  EXPECT_EQ(FixedRate(ctx, FixedRate::kNoWindow, 40'000'000'000).rate_bps(), 40'000'000'000u);
}

TEST(FixedRate, NeverChangesWhateverItIsTold) {
  TransportContext ctx;
  FixedRate f(ctx);
  Segment fb;
  fb.kind = SegmentKind::kCnp;
  f.on_cnp(1'000, fb);
  fb.kind = SegmentKind::kAck;
  fb.ece = true;
  fb.ue_echo = true;
  f.on_ack(2'000, fb, AckInfo{1'000, 1'000, 5'000});
  fb.kind = SegmentKind::kNack;
  f.on_nack(3'000, fb, AckInfo{0, 1'000, 1'000});
  f.on_send(4'000, 1'000);
  f.on_timer(5'000);
  EXPECT_EQ(f.rate_bps(), 100'000'000'000u);
  EXPECT_EQ(f.window_bytes(), 100'000u);
}

// One BDP = 100,000 B = 100 segments of 1000 B, sent back to back at line
// rate: the k-th at floor(k x 88.16), the 100th at floor(99 x 88.16) = 8727.
// Then the window is full until an ACK frees 2000 B: two more go, at
// max(ACK, pacing) instants.
TEST(FixedRate, CapsTheGoBackNSenderAtOneBdp) {
  TransportContext ctx;
  GbnSender s(GbnParams{}, ctx, FlowSpec{1, 1'000'000, 0}, std::make_unique<FixedRate>(ctx));
  Segment seg;
  uint64_t last = 0;
  int sent = 0;
  while (s.send_due_ns() != kTransportNever) {
    last = s.send_due_ns();
    ASSERT_TRUE(s.send(last, &seg));
    ++sent;
  }
  EXPECT_EQ(sent, 100);
  EXPECT_EQ(last, 8'727u);
  EXPECT_EQ(s.snd_nxt() - s.snd_una(), 100'000u);
  EXPECT_EQ(s.rate_bps(), 100'000'000'000u);
  EXPECT_EQ(s.window_bytes(), 100'000u);

  Segment a;
  a.kind = SegmentKind::kAck;
  a.flow = 1;
  a.seq = 2'000;
  s.receive(16'000, a);
  EXPECT_EQ(s.send_due_ns(), 8'816u);  // 100 x 88.16, already past
  ASSERT_TRUE(s.send(16'000, &seg));
  EXPECT_EQ(seg.seq, 100'000u);
  EXPECT_EQ(s.send_due_ns(), 16'088u);  // carry 0 after 8816 exactly: 88.16 -> 88
  ASSERT_TRUE(s.send(16'088, &seg));
  EXPECT_EQ(s.send_due_ns(), kTransportNever);
}

TEST(FixedRate, AsNoneTheSenderIsOnlyPaced) {
  TransportContext ctx;
  GbnSender s(GbnParams{}, ctx, FlowSpec{1, 300'000, 0},
              std::make_unique<FixedRate>(ctx, FixedRate::kNoWindow));
  Segment seg;
  int sent = 0;
  while (s.send_due_ns() != kTransportNever) {
    ASSERT_TRUE(s.send(s.send_due_ns(), &seg));
    ++sent;
  }
  EXPECT_EQ(sent, 300);
  EXPECT_EQ(seg.ts_ns, 26'359u);  // floor(299 x 88.16) = floor(26359.84)
}

}  // namespace
}  // namespace sluice
