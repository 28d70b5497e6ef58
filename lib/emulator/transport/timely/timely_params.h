#pragma once
// TIMELY's parameters ("TIMELY: RTT-based Congestion Control for the
// Datacenter", Mittal et al., SIGCOMM 2015, section 4, Algorithm 1, with the
// values of its 10 Gb/s evaluation), and the option of the TCD paper's
// UE-aware variant ("Congestion Detection in Lossless Networks", Zhang et
// al., SIGCOMM 2021, section 5.2.3). Scaling for faster fabrics is in the
// transport notes (transport-doc-hpcc-timely.md).

#include <cstdint>

namespace sluice {

struct TimelyParams {
  // alpha: EWMA weight of the newest RTT difference.
  double alpha = 0.875;
  // beta: multiplicative decrease factor.
  double beta = 0.8;
  // delta: additive increase step (bps).
  uint64_t delta_bps = 10'000'000;
  // T_low, T_high: below T_low the rate always grows, above T_high it is cut
  // in proportion to the excess; between them the RTT gradient decides.
  uint64_t t_low_ns = 50'000;
  uint64_t t_high_ns = 500'000;
  // minRTT, the gradient's normalizer.
  uint64_t min_rtt_ns = 20'000;
  // Hyper-active increase: after hai_after consecutive completion events
  // with a gradient <= 0, a gradient increase is hai_factor x delta.
  uint32_t hai_after = 5;
  uint32_t hai_factor = 5;
  // Rate bounds: [min_rate_bps, line rate]; the flow starts at
  // initial_rate_bps (0: line rate).
  uint64_t min_rate_bps = 100'000'000;
  uint64_t initial_rate_bps = 0;
  // What a completion event is: 0, every ACK (or NACK); otherwise an ACK
  // that completes a further chunk of this many bytes (snd_una crosses a
  // multiple of it), as TIMELY's 16-64 KB segments.
  uint64_t completion_bytes = 0;
  // TCD: a positive gradient (T_low <= RTT <= T_high) on an ACK whose data
  // arrived UE-marked, and not CE, leaves the rate as it is.
  bool ue_aware = false;
  // Sluice's extension, beyond the TCD text: hold above T_high too on UE.
  bool ue_hold_above_t_high = false;
};

// The TCD paper's TIMELY+TCD: UE-aware, beta raised from 0.8 to 1.6 so
// that congested (CE) flows back off harder; the rest as TIMELY.
inline TimelyParams timely_tcd_params() {
  TimelyParams p;
  p.ue_aware = true;
  p.beta = 1.6;
  return p;
}

}  // namespace sluice
