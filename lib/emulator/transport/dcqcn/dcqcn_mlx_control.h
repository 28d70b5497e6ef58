#pragma once
// DCQCN's reaction point as HPCC's and Floodgate's public ns-3 run it
// ("Mellanox's version", the *Mlx functions of their rdma-hw.cc), for
// comparing sluice with those simulators on the same settings:
//   - the first CNP sets alpha = 1 and starts two clocks, an alpha update
//     every alpha_interval (alpha = (1 - g) alpha + g if a CNP came since
//     the last update, else (1 - g) alpha) and a rate check every
//     decrease_interval, 1 ns after the alpha update of the same instant;
//   - a check that finds a CNP since the last one cuts:
//     RT = RC (unless clamp_target_rate is off and no increase came since
//     the last cut), RC = max(min rate, RC (1 - alpha / 2)), stage = 0,
//     and the increase timer restarts;
//   - each rate_timer after a cut, an increase by the timer alone (no byte
//     counter), then the stage counts up:
//       stage <  F   fast recovery      RC = (RT + RC) / 2
//       stage == F   additive increase  RT += R_AI,  RC = (RT + RC) / 2
//       stage >  F   hyper increase     RT += R_HAI, RC = (RT + RC) / 2
//     with RT at most the line rate.
// The flow starts at line rate; the first CNP does not cut by itself
// (their RateOnFirstCnp 1), the first check 1 ns after decrease_interval
// does. Their clocks tick for ever; here alpha is brought up to date when
// it is read and the rate check is armed only while a CNP waits for it,
// which gives the same values. Rates are doubles (theirs are integer bps).
// With ue_aware, increases are held while the latest ACK echoes UE, as in
// DcqcnControl.

#include <cstdint>

#include "lib/emulator/transport/dcqcn/dcqcn_params.h"
#include "lib/emulator/transport/flow_transport.h"
#include "lib/emulator/transport/rdma/rate_control.h"
#include "lib/emulator/transport/segment.h"

namespace sluice {

class DcqcnMlxControl : public RateControl {
 public:
  DcqcnMlxControl(const DcqcnParams& params, const TransportContext& ctx);

  // RC in bps, rounded down. Rate-only: no window.
  uint64_t rate_bps() const override;
  void on_send(uint64_t /*now_ns*/, uint32_t /*bytes*/) override {}
  void on_ack(uint64_t now_ns, const Segment& ack, const AckInfo& info) override;
  void on_nack(uint64_t now_ns, const Segment& nack, const AckInfo& info) override;
  void on_cnp(uint64_t now_ns, const Segment& cnp) override;
  uint64_t timer_due_ns() const override;
  void on_timer(uint64_t now_ns) override;

  // State, for tests and traces. alpha_at() brings alpha up to date first.
  double current_rate() const { return rc_; }
  double target_rate() const { return rt_; }
  double alpha_at(uint64_t now_ns);
  uint32_t stage() const { return stage_; }
  uint64_t decrease_due_ns() const { return decrease_due_ns_; }
  uint64_t increase_due_ns() const { return increase_due_ns_; }
  uint64_t cuts() const { return cuts_; }
  uint64_t fast_recoveries() const { return fast_recoveries_; }
  uint64_t additive_increases() const { return additive_; }
  uint64_t hyper_increases() const { return hyper_; }
  uint64_t held_events() const { return held_; }

 private:
  // Applies every alpha update due at or before now.
  void advance_alpha(uint64_t now_ns);
  void decrease(uint64_t at_ns);
  void increase();
  bool at_line_rate() const;

  DcqcnParams params_;
  double line_rate_;
  double min_rate_;
  double rc_;
  double rt_;
  double alpha_ = 1.0;
  bool started_ = false;  // a CNP has come: the clocks run
  uint64_t alpha_tick_ns_ = kTransportNever;
  bool alpha_cnp_ = false;
  uint64_t decrease_origin_ns_ = 0;  // the rate checks fall on origin + k interval
  bool decrease_cnp_ = false;
  uint64_t decrease_due_ns_ = kTransportNever;
  uint64_t increase_due_ns_ = kTransportNever;
  uint32_t stage_ = 0;
  bool ue_held_ = false;
  uint64_t cuts_ = 0;
  uint64_t fast_recoveries_ = 0;
  uint64_t additive_ = 0;
  uint64_t hyper_ = 0;
  uint64_t held_ = 0;
};

}  // namespace sluice
