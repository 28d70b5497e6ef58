#pragma once
// DCQCN's reaction-point parameters ("Congestion Control for Large-Scale
// RDMA Deployments", Zhu et al., SIGCOMM 2015, section 3.1 "RP algorithm"
// and its parameter settings). The notification point's CNP interval N is
// GbnParams::cnp_interval_ns (the receiver's). Where HPCC's public ns-3 or
// the DCQCN authors' ns-3 use other values, transport-doc-rdma.md lists
// them; so does the UE-aware variant (TCD, "Congestion Detection in Lossless
// Networks", Zhang et al., SIGCOMM 2021, sections 5.2 and 6).

#include <cstdint>

namespace sluice {

struct DcqcnParams {
  // Which reaction point: the paper's rules (DcqcnControl) or those of HPCC's
  // and Floodgate's public ns-3, "Mellanox's version" (DcqcnMlxControl:
  // alpha and the cut on fixed clocks, increases by the timer alone).
  enum class Rules : uint8_t { kPaper, kNs3Mlx };
  Rules rules = Rules::kPaper;
  // g: the gain of alpha's moving average (paper: 1/256).
  double g = 1.0 / 256;
  // alpha before the first CNP (the first cut halves the rate).
  double initial_alpha = 1.0;
  // K: alpha decays, alpha = (1 - g) alpha, after each K without a CNP
  // (paper: 55 us, longer than the NP's 50 us CNP interval).
  uint64_t alpha_interval_ns = 55'000;
  // T: the rate-increase timer's period (paper: 55 us).
  uint64_t rate_timer_ns = 55'000;
  // B: a rate-increase event per B payload bytes sent (paper: 10 MB).
  uint64_t byte_counter_bytes = 10'000'000;
  // F: increase events of fast recovery before additive increase; hyper
  // increase once both counters exceed it (paper: 5).
  uint32_t fast_recovery_stages = 5;
  // R_AI: the target rate's step in additive increase (paper: 40 Mb/s).
  uint64_t rate_ai_bps = 40'000'000;
  // R_HAI: the hyper-increase step (the target rate grows by i R_HAI in the
  // i-th hyper round). 200 Mb/s is the DCQCN authors' ns-3 configuration.
  uint64_t rate_hai_bps = 200'000'000;
  // The rate is never cut below this. 100 Mb/s, the DCQCN authors' and
  // HPCC's ns-3 default.
  uint64_t min_rate_bps = 100'000'000;
  // true (the paper): every cut sets the target rate to the current rate.
  // false (HPCC's ns-3 default, CLAMP_TARGET_RATE 0): a cut that follows a
  // cut with no increase event between keeps the target rate.
  bool clamp_target_rate = true;
  // kNs3Mlx only: a cut happens at most once per this, at the first tick
  // after a CNP (RATE_DECREASE_INTERVAL, 4 us in both ns-3 configurations).
  uint64_t decrease_interval_ns = 4'000;
  // TCD's UE-aware reaction: while the latest ACK or NACK echoes UE (data
  // through a port TCD found undetermined), rate-increase events are held:
  // neither rate moves and the increase counters stand still. CE (CNPs)
  // cuts as usual.
  bool ue_aware = false;
};

}  // namespace sluice
