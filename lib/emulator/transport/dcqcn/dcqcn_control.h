#pragma once
// DCQCN's reaction point for one flow ("Congestion Control for Large-Scale
// RDMA Deployments", Zhu et al., SIGCOMM 2015, section 3.1 "RP algorithm"):
//   - a CNP cuts the rate:  RT = RC,  RC = RC (1 - alpha / 2),
//     alpha = (1 - g) alpha + g, and restarts the alpha timer, the
//     rate-increase timer and the byte counter;
//   - each K without a CNP: alpha = (1 - g) alpha;
//   - rate-increase events, one per T of the timer and one per B bytes
//     sent, each counted since the last cut (timer stage t, byte stage b):
//       max(t, b) <= F   fast recovery      RC = (RT + RC) / 2
//       min(t, b) >  F   hyper increase     RT += i R_HAI, i = min(t, b) - F,
//                                           RC = (RT + RC) / 2
//       otherwise        additive increase  RT += R_AI, RC = (RT + RC) / 2
//     with RT at most the line rate and RC at least the minimum rate.
// The flow starts at line rate; the timers run from its first CNP (before
// it nothing can change). Once RC and RT are back at line rate the
// increase timer stops until the next cut.
// With DcqcnParams::ue_aware (TCD, "Congestion Detection in Lossless
// Networks", sections 5.2 and 6): while the latest ACK or NACK echoes UE,
// increase events are held (see dcqcn_params.h).

#include <cstdint>

#include "lib/emulator/transport/dcqcn/dcqcn_params.h"
#include "lib/emulator/transport/flow_transport.h"
#include "lib/emulator/transport/rdma/rate_control.h"
#include "lib/emulator/transport/segment.h"

namespace sluice {

class DcqcnControl : public RateControl {
 public:
  DcqcnControl(const DcqcnParams& params, const TransportContext& ctx);

  // RC in bps, rounded down. Rate-only: no window.
  uint64_t rate_bps() const override;
  void on_send(uint64_t now_ns, uint32_t bytes) override;
  void on_ack(uint64_t now_ns, const Segment& ack, const AckInfo& info) override;
  void on_nack(uint64_t now_ns, const Segment& nack, const AckInfo& info) override;
  void on_cnp(uint64_t now_ns, const Segment& cnp) override;
  uint64_t timer_due_ns() const override;
  void on_timer(uint64_t now_ns) override;

  // State, for tests and traces.
  double current_rate() const { return rc_; }
  double target_rate() const { return rt_; }
  double alpha() const { return alpha_; }
  uint32_t timer_stage() const { return t_stage_; }
  uint32_t byte_stage() const { return b_stage_; }
  uint64_t bytes_counted() const { return bytes_since_; }
  bool ue_held() const { return ue_held_; }
  uint64_t alpha_due_ns() const { return alpha_due_ns_; }
  uint64_t increase_due_ns() const { return increase_due_ns_; }
  uint64_t cuts() const { return cuts_; }
  uint64_t fast_recoveries() const { return fast_recoveries_; }
  uint64_t additive_increases() const { return additive_; }
  uint64_t hyper_increases() const { return hyper_; }
  uint64_t held_events() const { return held_; }

 private:
  // RC and RT are back at line rate: increases can change nothing.
  bool at_line_rate() const;
  // One increase event, after its stage counter has been advanced.
  void increase();
  void take_ue(const Segment& s);

  DcqcnParams params_;
  double line_rate_;
  double min_rate_;
  double rc_;
  double rt_;
  double alpha_;
  bool cut_once_ = false;
  uint32_t t_stage_ = 0;
  uint32_t b_stage_ = 0;
  uint64_t bytes_since_ = 0;
  bool ue_held_ = false;
  uint64_t alpha_due_ns_ = kTransportNever;
  uint64_t increase_due_ns_ = kTransportNever;
  uint64_t cuts_ = 0;
  uint64_t fast_recoveries_ = 0;
  uint64_t additive_ = 0;
  uint64_t hyper_ = 0;
  uint64_t held_ = 0;
};

}  // namespace sluice
