#pragma once
// HPCC's sender reaction for one flow ("HPCC: High Precision Congestion
// Control", Li et al., SIGCOMM 2019, section 3, Algorithm 1): every ACK
// echoes the INT records its data collected; the sender estimates each
// hop's normalized inflight bytes u = qlen / (B T) + txRate / B from two
// consecutive records, takes the most loaded hop, smooths it into U, and
// sets its window W from a reference window Wc that moves only once per RTT:
//   U >= eta or incStage >= maxStage:  W = Wc / (U / eta) + W_AI
//   otherwise:                         W = Wc + W_AI
// The pacing rate is W / T.

#include <array>
#include <cstdint>

#include "lib/emulator/transport/flow_transport.h"
#include "lib/emulator/transport/hpcc/hpcc_params.h"
#include "lib/emulator/transport/rdma/rate_control.h"
#include "lib/emulator/transport/segment.h"

namespace sluice {

class HpccControl : public RateControl {
 public:
  // U before the first measurement: 1, the path taken as fully used by a
  // flow that starts at line rate (HPCC's ns-3 starts there too).
  static constexpr double kInitialUtilization = 1.0;

  HpccControl(const HpccParams& params, const TransportContext& ctx);

  // W / T, within [min rate, line rate].
  uint64_t rate_bps() const override;
  // W, rounded to whole bytes.
  uint64_t window_bytes() const override;
  void on_ack(uint64_t now_ns, const Segment& ack, const AckInfo& info) override;
  // A NACK echoes INT like an ACK (the receiver answers the out-of-order
  // data with it), so it is taken the same way.
  void on_nack(uint64_t now_ns, const Segment& nack, const AckInfo& info) override;

  // State, for tests and traces.
  double window() const { return w_; }
  double reference_window() const { return wc_; }
  double utilization() const { return u_; }
  uint32_t inc_stage() const { return inc_stage_; }
  double w_ai() const { return w_ai_; }
  uint64_t base_rtt_ns() const { return t_ns_; }
  double max_window() const { return w_max_; }
  double min_window() const { return w_min_; }
  uint64_t last_update_seq() const { return last_update_seq_; }

 private:
  void react(const Segment& ack, const AckInfo& info);
  // Folds the ACK's hops into U; false when no hop gave a usable sample.
  bool measure(const Segment& ack);
  void compute_window(bool update_reference);

  HpccParams params_;
  uint64_t line_rate_bps_;
  uint64_t min_rate_bps_;
  uint64_t t_ns_;
  double w_max_;  // line rate x T, the initial window (BDP)
  double w_min_;  // min rate x T
  double w_ai_;
  double w_;
  double wc_;
  double u_ = kInitialUtilization;
  uint32_t inc_stage_ = 0;
  bool started_ = false;  // the first ACK set last_update_seq_
  uint64_t last_update_seq_ = 0;
  bool have_hops_ = false;
  uint8_t hop_count_ = 0;
  std::array<IntHop, kMaxIntHops> hops_{};  // the last record of each hop
};

}  // namespace sluice
