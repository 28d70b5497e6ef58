// A TCD switch's configuration resolved per egress port: which pauses turn
// its queues OFF, q_th and max_T_on defaults worked by hand, and the enqueue
// ECN marker TCD replaces.
#include "lib/mechanisms/tcd/tcd_params.h"

#include <gtest/gtest.h>

namespace sluice {
namespace {

SwitchConfig two_ports() {
  SwitchConfig sw;
  sw.tcd.enabled = true;
  sw.ports.resize(2);
  sw.ports[0].role = PortRole::kHost;
  sw.ports[1].role = PortRole::kSwitch;
  for (PortConfig& p : sw.ports) {
    p.rate_bps = 10'000'000'000;
    p.hop_rtt_ns = 10'000;
    p.mtu = 1500;
  }
  return sw;
}

TEST(TcdParams, PauseSourceFollowsHowTheDataPathPausesEachPort) {
  SwitchConfig sw = two_ports();
  EXPECT_EQ(tcd_pause_source(sw, sw.ports[0]), TcdPauseSource::kNone);
  EXPECT_EQ(tcd_pause_source(sw, sw.ports[1]), TcdPauseSource::kNone);
  sw.pfc.mode = PfcGenerationMode::kPause;
  EXPECT_EQ(tcd_pause_source(sw, sw.ports[0]), TcdPauseSource::kPfc);
  sw.ports[0].pfc.enabled = false;  // opted out of the switch's PFC
  EXPECT_EQ(tcd_pause_source(sw, sw.ports[0]), TcdPauseSource::kNone);
  // BFC owns switch-facing ports; PFC still holds back hosts.
  sw.bfc.enabled = true;
  sw.ports[0].pfc.enabled = true;
  EXPECT_EQ(tcd_pause_source(sw, sw.ports[0]), TcdPauseSource::kPfc);
  EXPECT_EQ(tcd_pause_source(sw, sw.ports[1]), TcdPauseSource::kBfc);
  sw.pfc.mode = PfcGenerationMode::kOff;
  EXPECT_EQ(tcd_pause_source(sw, sw.ports[0]), TcdPauseSource::kNone);
}

TEST(TcdParams, QthIsTheConfiguredOneElseTheEcnStepThreshold) {
  SwitchConfig sw = two_ports();
  EXPECT_EQ(tcd_q_th_bytes(sw), 0u);
  sw.tm.ecn.mode = EcnMode::kStep;
  sw.tm.ecn.step_k_bytes = 40'000;
  EXPECT_EQ(tcd_q_th_bytes(sw), 40'000u);
  EXPECT_EQ(tcd_params(sw, sw.ports[0]).q_th_bytes, 40'000u);
  sw.tcd.q_th_bytes = 12'000;
  EXPECT_EQ(tcd_params(sw, sw.ports[1]).q_th_bytes, 12'000u);
}

TEST(TcdParams, PfcDefaultFromTheHysteresisTheRateAndHalfTheHopRtt) {
  SwitchConfig sw = two_ports();
  sw.pfc.mode = PfcGenerationMode::kPfc;
  // XOFF - XON = 2 x (1500 + 14) = 3028 B -> 2422.4 ns at 10 Gb/s, rounded
  // up; d = 10 us / 2: 2 x 2423 + 4 x 5000.
  EXPECT_EQ(tcd_default_max_t_on_ns(sw, sw.ports[0]), 24'846u);
  // 10 KB of hysteresis = 8 us: 16 us + 20 us.
  sw.pfc.hysteresis_bytes = 10'000;
  EXPECT_EQ(tcd_params(sw, sw.ports[1]).max_t_on_ns, 36'000u);
  // An unshaped port: only the round trip.
  sw.ports[1].rate_bps = 0;
  EXPECT_EQ(tcd_params(sw, sw.ports[1]).max_t_on_ns, 20'000u);
}

TEST(TcdParams, BfcDefaultFromThForOneActiveQueueAndTheHopRtt) {
  SwitchConfig sw = two_ports();
  sw.bfc.enabled = true;
  // Th = 10 us x 10 Gb/s = 12500 B (= 10 us): 2 x (10 us + 10 us).
  EXPECT_EQ(tcd_default_max_t_on_ns(sw, sw.ports[1]), 40'000u);
  EXPECT_EQ(tcd_default_max_t_on_ns(sw, sw.ports[0]), 0u);  // a host port, no PFC
  // bfc.th 5 us: Th = 6250 B -> 2 x (5 us + 10 us).
  sw.bfc.th_ns = 5'000;
  EXPECT_EQ(tcd_default_max_t_on_ns(sw, sw.ports[1]), 30'000u);
  // Th by default stands for the switch's hop RTT (the largest among its
  // switch-facing ports); the round trip is the port's own.
  sw.bfc.th_ns = 0;
  sw.ports.push_back(sw.ports[1]);
  sw.ports[2].hop_rtt_ns = 30'000;
  EXPECT_EQ(tcd_default_max_t_on_ns(sw, sw.ports[1]), 2 * (30'000u + 10'000u));
  EXPECT_EQ(tcd_default_max_t_on_ns(sw, sw.ports[2]), 2 * (30'000u + 30'000u));
}

TEST(TcdParams, ConfiguredValuesWinOverDefaults) {
  SwitchConfig sw = two_ports();
  sw.pfc.mode = PfcGenerationMode::kPfc;
  sw.tcd.q_th_bytes = 5'000;
  sw.tcd.max_t_on_ns = 77'000;
  sw.tcd.queue_falling = true;
  TcdParams p = tcd_params(sw, sw.ports[0]);
  EXPECT_EQ(p.max_t_on_ns, 77'000u);
  EXPECT_TRUE(p.queue_falling);
  EXPECT_EQ(p.falling_interval_ns, 10'000u);  // default: the port's hop RTT
  sw.tcd.falling_interval_ns = 2'500;
  EXPECT_EQ(tcd_params(sw, sw.ports[0]).falling_interval_ns, 2'500u);
  sw.tcd.ce_codepoint = 2;
  sw.tcd.ue_codepoint = 3;
  EXPECT_EQ(tcd_codepoints(sw.tcd).ce, 2u);
  EXPECT_EQ(tcd_codepoints(sw.tcd).ue, 3u);
}

TEST(TcdParams, TcdTurnsTheEnqueueEcnMarkerOff) {
  SwitchConfig sw = two_ports();
  sw.tm.ecn.mode = EcnMode::kStep;
  sw.tm.ecn.step_k_bytes = 30'000;
  EXPECT_EQ(enqueue_ecn_config(sw).mode, EcnMode::kOff);
  EXPECT_EQ(enqueue_ecn_config(sw).step_k_bytes, 30'000u);
  sw.tcd.enabled = false;
  EXPECT_EQ(enqueue_ecn_config(sw).mode, EcnMode::kStep);
}

// A port's own ecn (the public simulators mark by link rate) replaces the
// switch's, except on a TCD switch, where nothing marks at enqueue.
TEST(TcdParams, APortsOwnEcnReplacesTheSwitchs) {
  SwitchConfig sw = two_ports();
  sw.tcd.enabled = false;
  sw.tm.ecn.mode = EcnMode::kStep;
  sw.tm.ecn.step_k_bytes = 30'000;
  EcnConfig red;
  red.mode = EcnMode::kRed;
  red.red_min_bytes = 1'600'000;
  red.red_max_bytes = 6'400'000;
  red.red_pmax = 0.2;
  sw.ports[1].ecn = red;
  EXPECT_EQ(enqueue_ecn_config(sw, sw.ports[0]).mode, EcnMode::kStep);
  EXPECT_EQ(enqueue_ecn_config(sw, sw.ports[1]).mode, EcnMode::kRed);
  EXPECT_EQ(enqueue_ecn_config(sw, sw.ports[1]).red_max_bytes, 6'400'000u);
  sw.tcd.enabled = true;
  EXPECT_EQ(enqueue_ecn_config(sw, sw.ports[1]).mode, EcnMode::kOff);
}

}  // namespace
}  // namespace sluice
