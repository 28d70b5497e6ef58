#pragma once
// One TCP flow's sender: a byte-sequence window over Segment, not paced.
// NewReno: slow start and congestion avoidance (RFC 5681 section 3.1), fast
// retransmit and fast recovery with partial ACKs (RFC 5681 3.2, RFC 6582
// 3.2), the RTO with exponential backoff and go-back to snd_una (RFC 6298
// sections 2 and 5), ECN halving at most once per window (RFC 3168 6.1.2).
// With TcpParams::dctcp, DCTCP's sender ("Data Center TCP (DCTCP)",
// Alizadeh et al., SIGCOMM 2010, section 3.1): alpha, the running fraction of
// ECE-acknowledged bytes, once per window; cwnd cut by alpha/2 at most once
// per window. RTT samples come from the send time each ACK echoes: it is the
// exact time of the transmission that triggered the ACK, original or
// retransmission, so there is no retransmission ambiguity for Karn's rule to
// resolve.
// Flowtune's endpoints (set_allocation; "Flowtune: Flowlet Control for
// Datacenter Networks", section 4): while an allocated rate holds, the
// window is opened to twice the rate's bytes per RTT and each segment is
// paced at the rate (its frame's wire time); when the allocation lapses,
// TCP takes over from cwnd = the rate's bytes per smoothed RTT (section 4,
// "using the previously allocated rates as a starting point").

#include <cstdint>

#include "lib/emulator/transport/flow_transport.h"
#include "lib/emulator/transport/segment.h"
#include "lib/emulator/transport/tcp/tcp_params.h"

namespace sluice {

class TcpSender final : public FlowSender {
 public:
  TcpSender(const TcpParams& params, const TransportContext& ctx, const FlowSpec& flow);

  bool send(uint64_t now_ns, Segment* out) override;
  // Unpaced: the last send (or the flow's start) whenever the window has
  // room or a retransmission waits, meaning "now"; else kTransportNever.
  uint64_t send_due_ns() const override;
  void receive(uint64_t now_ns, const Segment& s) override;
  uint64_t timer_due_ns() const override {
    return allocated_ && alloc_until_ns_ < rto_due_ns_ ? alloc_until_ns_ : rto_due_ns_;
  }
  void on_timer(uint64_t now_ns) override;
  uint64_t completed_ns() const override { return completed_ns_; }
  uint64_t rate_bps() const override { return 0; }
  uint64_t window_bytes() const override { return cwnd_; }
  const SenderCounters& counters() const override { return counters_; }
  void set_allocation(uint64_t now_ns, uint64_t rate_bps, uint64_t until_ns) override;

  // State, for traces and tests.
  uint64_t cwnd_bytes() const { return cwnd_; }
  uint64_t ssthresh_bytes() const { return ssthresh_; }
  uint64_t snd_una() const { return snd_una_; }
  uint64_t snd_nxt() const { return snd_nxt_; }
  uint64_t srtt_ns() const { return srtt_ns_; }
  uint64_t rttvar_ns() const { return rttvar_ns_; }
  uint64_t rto_ns() const { return rto_ns_; }
  bool in_fast_recovery() const { return in_recovery_; }
  double dctcp_alpha() const { return alpha_; }
  bool allocated() const { return allocated_; }

 private:
  bool can_send() const;
  uint32_t segment_bytes(uint64_t seq) const;
  void rtt_sample(uint64_t rtt_ns);
  void on_new_ack(uint64_t now_ns, const Segment& ack);
  void on_dup_ack(const Segment& ack);
  void dctcp_observe(uint64_t acked, bool ece);
  void on_echo(uint64_t ack);
  bool ecn_may_cut(uint64_t ack) const;
  uint64_t dctcp_reduced() const;
  void ecn_cut();
  void grow(uint64_t acked);
  void enter_fast_recovery();

  uint64_t window_limit() const;
  void end_allocation();
  static uint64_t paced_gap_ns(uint64_t bits, uint64_t rate_bps);

  const TcpParams params_;
  const FlowSpec flow_;
  const uint64_t mss_;
  const uint32_t frame_extra_;  // header and wire-overhead bytes per segment (pacing)
  const uint64_t base_rtt_ns_;

  // Sequence space (bytes from 0).
  uint64_t snd_una_ = 0;             // first byte not acknowledged
  uint64_t snd_nxt_ = 0;             // next byte to send (rewound to snd_una_ by an RTO)
  uint64_t snd_max_ = 0;             // one past the highest byte ever sent
  bool retransmit_pending_ = false;  // fast retransmit / partial ACK: resend snd_una_ next
  bool done_ = false;
  uint64_t completed_ns_ = 0;
  uint64_t last_send_ns_ = 0;

  // Congestion control.
  uint64_t cwnd_;
  uint64_t ssthresh_;
  uint64_t ca_acked_ = 0;  // bytes acked toward the next +1 MSS in congestion avoidance
  uint32_t dupacks_ = 0;
  bool in_recovery_ = false;
  bool partial_ack_seen_ = false;  // in this recovery (RFC 6582: timer reset on the first only)
  bool recover_set_ = false;       // recover_ holds a value (RFC 6582's "recover")
  uint64_t recover_ = 0;           // snd_max_ when fast recovery or an RTO began
  bool cwr_set_ = false;           // a window reduction happened ...
  uint64_t cwr_end_ = 0;           // ... for the data below this (snd_max_ then)

  // DCTCP.
  double alpha_;
  bool obs_open_ = false;    // an observation window is running ...
  uint64_t obs_end_ = 0;     // ... and ends when snd_una_ reaches this
  uint64_t obs_acked_ = 0;   // bytes acknowledged in it
  uint64_t obs_marked_ = 0;  // of which by ACKs with ECE

  // RTO (RFC 6298).
  bool have_rtt_ = false;
  uint64_t srtt_ns_ = 0;
  uint64_t rttvar_ns_ = 0;
  uint64_t rto_ns_;
  uint64_t rto_due_ns_ = kTransportNever;

  // Flowtune's allocation.
  bool allocated_ = false;
  uint64_t alloc_rate_bps_ = 0;
  uint64_t alloc_until_ns_ = kTransportNever;
  uint64_t next_paced_ns_ = 0;    // the next segment may go then
  uint64_t last_paced_bits_ = 0;  // the last paced segment's frame, in bits

  SenderCounters counters_;
};

}  // namespace sluice
