#pragma once
// TIMELY's rate computation for one flow ("TIMELY: RTT-based Congestion
// Control for the Datacenter", Mittal et al., SIGCOMM 2015, section 4,
// Algorithm 1), per completion event, with the TCD paper's UE-aware option
// ("Congestion Detection in Lossless Networks", Zhang et al., SIGCOMM 2021,
// section 5.2.3). The RTT of an event is now - the echoed send time of the
// acknowledged data (fabric clock, exact). With g = EWMA(RTT - previous
// RTT) / minRTT:
//   RTT < T_low:   rate += delta
//   RTT > T_high:  rate *= 1 - beta (1 - T_high / RTT)
//   g <= 0:        rate += N delta  (N = hai_factor after hai_after events
//                                    with g <= 0 in a row, else 1)
//   g > 0:         rate *= 1 - beta g   (held on a UE-marked ACK if ue_aware)
// Rate-only: no window.

#include <cstdint>

#include "lib/emulator/transport/flow_transport.h"
#include "lib/emulator/transport/rdma/rate_control.h"
#include "lib/emulator/transport/segment.h"
#include "lib/emulator/transport/timely/timely_params.h"

namespace sluice {

class TimelyControl : public RateControl {
 public:
  TimelyControl(const TimelyParams& params, const TransportContext& ctx);

  uint64_t rate_bps() const override;
  void on_ack(uint64_t now_ns, const Segment& ack, const AckInfo& info) override;
  // A NACK echoes the send time of the data that caused it: an RTT sample
  // like an ACK's.
  void on_nack(uint64_t now_ns, const Segment& nack, const AckInfo& info) override;

  // State, for tests and traces.
  double rate() const { return rate_; }
  double rtt_diff_ns() const { return rtt_diff_ns_; }
  uint64_t prev_rtt_ns() const { return prev_rtt_ns_; }
  uint32_t negative_gradient_events() const { return neg_events_; }
  uint64_t events() const { return events_; }
  uint64_t ue_holds() const { return ue_holds_; }

 private:
  void completion(uint64_t now_ns, const Segment& ack, const AckInfo& info);

  TimelyParams params_;
  double line_rate_;
  double min_rate_;
  double rate_;
  bool have_rtt_ = false;
  uint64_t prev_rtt_ns_ = 0;
  double rtt_diff_ns_ = 0.0;
  uint32_t neg_events_ = 0;  // consecutive events with gradient <= 0
  uint64_t last_chunk_ = 0;  // chunks completed (completion_bytes > 0)
  uint64_t events_ = 0;      // completion events taken (the first included)
  uint64_t ue_holds_ = 0;    // decreases skipped on UE
};

}  // namespace sluice
