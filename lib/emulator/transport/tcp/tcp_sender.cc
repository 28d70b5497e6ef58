// TCP NewReno / DCTCP sender: see tcp_sender.h for the rules and sources.
#include "lib/emulator/transport/tcp/tcp_sender.h"

#include <algorithm>

namespace sluice {

TcpSender::TcpSender(const TcpParams& params, const TransportContext& ctx, const FlowSpec& flow)
    : params_(params),
      flow_(flow),
      mss_(ctx.max_payload > 0 ? ctx.max_payload : 1),
      frame_extra_(ctx.header_bytes + ctx.wire_overhead),
      base_rtt_ns_(ctx.base_rtt_ns),
      cwnd_(uint64_t{std::max(params.init_cwnd_segments, 1u)} * mss_),
      ssthresh_(params.initial_ssthresh_bytes),
      alpha_(params.dctcp_initial_alpha),
      rto_ns_(std::clamp(params.initial_rto_ns, params.min_rto_ns,
                         std::max(params.max_rto_ns, params.min_rto_ns))) {
  if (params_.handshake_rtt_sample && ctx.base_rtt_ns > 0) rtt_sample(ctx.base_rtt_ns);
  if (flow_.bytes == 0) {
    // Nothing to deliver: complete from the start.
    done_ = true;
    completed_ns_ = flow_.start_ns;
  }
}

uint32_t TcpSender::segment_bytes(uint64_t seq) const {
  const uint64_t left = flow_.bytes - seq;
  return static_cast<uint32_t>(left < mss_ ? left : mss_);
}

bool TcpSender::can_send() const {
  if (done_) return false;
  if (retransmit_pending_) return true;  // a fast retransmit goes regardless of cwnd
  if (snd_nxt_ >= flow_.bytes) return false;
  return snd_nxt_ - snd_una_ + segment_bytes(snd_nxt_) <= window_limit();
}

// cwnd, or while an allocation holds the window it opens: two RTTs' worth of
// the rate (the smoothed RTT, or the base RTT before a sample), so the
// pacing, not the window, sets the pace.
uint64_t TcpSender::window_limit() const {
  if (!allocated_) return cwnd_;
  const uint64_t rtt = have_rtt_ ? std::max(srtt_ns_, base_rtt_ns_) : base_rtt_ns_;
  const unsigned __int128 open =
      static_cast<unsigned __int128>(alloc_rate_bps_) * rtt * 2 / 8'000'000'000ull;
  return std::max<uint64_t>(cwnd_, std::max<uint64_t>(static_cast<uint64_t>(open), mss_));
}

uint64_t TcpSender::send_due_ns() const {
  if (!can_send()) return kTransportNever;
  const uint64_t due = std::max(flow_.start_ns, last_send_ns_);
  return allocated_ ? std::max(due, next_paced_ns_) : due;
}

// A frame of `bits` at rate_bps, in whole ns rounded up.
uint64_t TcpSender::paced_gap_ns(uint64_t bits, uint64_t rate_bps) {
  const unsigned __int128 b = static_cast<unsigned __int128>(bits) * 1'000'000'000ull;
  return static_cast<uint64_t>((b + rate_bps - 1) / rate_bps);
}

void TcpSender::set_allocation(uint64_t now_ns, uint64_t rate_bps, uint64_t until_ns) {
  if (rate_bps == 0 || until_ns <= now_ns) return;
  if (!allocated_) {
    next_paced_ns_ = now_ns;
  } else if (rate_bps != alloc_rate_bps_ && last_paced_bits_ != 0) {
    // The next segment is re-timed at the new rate from the last one's
    // start: after a brief very low rate, a raised one must not leave it
    // waiting out the old gap (until the lease ends, if no rate comes).
    next_paced_ns_ = last_send_ns_ + paced_gap_ns(last_paced_bits_, rate_bps);
  }
  allocated_ = true;
  alloc_rate_bps_ = rate_bps;
  alloc_until_ns_ = until_ns;
}

// The allocation lapsed: TCP goes on from the rate it had.
void TcpSender::end_allocation() {
  allocated_ = false;
  const uint64_t rtt = have_rtt_ ? srtt_ns_ : base_rtt_ns_;
  const unsigned __int128 bytes =
      static_cast<unsigned __int128>(alloc_rate_bps_) * rtt / 8'000'000'000ull;
  cwnd_ = std::max<uint64_t>(cwnd_, std::max<uint64_t>(static_cast<uint64_t>(bytes), mss_));
  alloc_until_ns_ = kTransportNever;
}

bool TcpSender::send(uint64_t now_ns, Segment* out) {
  if (now_ns < flow_.start_ns || !can_send()) return false;
  if (allocated_ && now_ns < next_paced_ns_) return false;
  uint64_t seq;
  if (retransmit_pending_) {
    retransmit_pending_ = false;
    seq = snd_una_;
  } else {
    seq = snd_nxt_;
    snd_nxt_ += segment_bytes(seq);
  }
  const uint32_t bytes = segment_bytes(seq);
  if (seq < snd_max_) ++counters_.retransmitted;
  snd_max_ = std::max(snd_max_, seq + bytes);
  ++counters_.data_segments;
  // RFC 6298 (5.1): a data segment starts the timer if it is not running.
  if (rto_due_ns_ == kTransportNever) rto_due_ns_ = now_ns + rto_ns_;
  last_send_ns_ = now_ns;
  if (allocated_) {
    // The next segment no sooner than this one's frame takes at the rate.
    last_paced_bits_ = uint64_t{bytes + frame_extra_} * 8;
    next_paced_ns_ = now_ns + paced_gap_ns(last_paced_bits_, alloc_rate_bps_);
  }

  reset_segment(out);
  out->kind = SegmentKind::kData;
  out->flow = flow_.id;
  out->seq = seq;
  out->bytes = bytes;
  out->ecn = params_.ecn ? kEcnEct0 : kEcnNotEct;
  out->ts_ns = now_ns;
  return true;
}

void TcpSender::rtt_sample(uint64_t r) {
  // RFC 6298 (2.2, 2.3) with alpha = 1/8, beta = 1/4, K = 4; the clock
  // granularity G is 1 ns and left out. Integer ns, truncated.
  if (!have_rtt_) {
    have_rtt_ = true;
    srtt_ns_ = r;
    rttvar_ns_ = r / 2;
  } else {
    const uint64_t diff = srtt_ns_ > r ? srtt_ns_ - r : r - srtt_ns_;
    rttvar_ns_ = (3 * rttvar_ns_ + diff) / 4;
    srtt_ns_ = (7 * srtt_ns_ + r) / 8;
  }
  const uint64_t rto = srtt_ns_ + 4 * rttvar_ns_;
  rto_ns_ = std::min(std::max(rto, params_.min_rto_ns), params_.max_rto_ns);
}

void TcpSender::receive(uint64_t now_ns, const Segment& s) {
  // TCP takes only ACKs (no NACKs or CNPs come its way).
  if (done_ || s.kind != SegmentKind::kAck) return;
  if (s.seq > snd_max_ || s.seq < snd_una_) return;  // never sent, or stale (reordered)
  if (s.ece) ++counters_.ecn_echoes;
  if (s.seq > snd_una_) {
    on_new_ack(now_ns, s);
  } else {
    on_dup_ack(s);
  }
}

void TcpSender::on_new_ack(uint64_t now_ns, const Segment& s) {
  const uint64_t acked = s.seq - snd_una_;
  if (s.ts_ns <= now_ns) rtt_sample(now_ns - s.ts_ns);
  snd_una_ = s.seq;
  snd_nxt_ = std::max(snd_nxt_, snd_una_);  // after an RTO, the receiver may hold more
  if (params_.dctcp) dctcp_observe(acked, s.ece);

  if (snd_una_ >= flow_.bytes) {
    done_ = true;
    completed_ns_ = now_ns;
    rto_due_ns_ = kTransportNever;
    in_recovery_ = false;
    retransmit_pending_ = false;
    return;
  }

  bool restart_timer = true;
  if (in_recovery_) {
    if (snd_una_ >= recover_) {
      // Full ACK (RFC 6582 3.2 step 3, option 1: no burst on exit).
      const uint64_t flight = snd_max_ - snd_una_;
      cwnd_ = std::min(ssthresh_, std::max(flight, mss_) + mss_);
      in_recovery_ = false;
      dupacks_ = 0;
      ca_acked_ = 0;
    } else {
      // Partial ACK: resend the next hole, deflate by what was acked, add
      // back one MSS if at least one was acked; only the first partial ACK
      // restarts the timer (RFC 6582's "Impatient" variant).
      retransmit_pending_ = true;
      cwnd_ = cwnd_ > acked ? cwnd_ - acked : 0;
      if (acked >= mss_) cwnd_ += mss_;
      cwnd_ = std::max(cwnd_, mss_);
      restart_timer = !partial_ack_seen_;
      partial_ack_seen_ = true;
    }
  } else {
    dupacks_ = 0;
    // RFC 3168 6.1.2: no increase on an ACK carrying ECE.
    if (!(s.ece && params_.ecn)) grow(acked);
    if (s.ece) on_echo(s.seq);
  }

  // RFC 6298 (5.2, 5.3).
  if (snd_una_ == snd_max_) {
    rto_due_ns_ = kTransportNever;
  } else if (restart_timer) {
    rto_due_ns_ = now_ns + rto_ns_;
  }
}

void TcpSender::on_dup_ack(const Segment& s) {
  if (snd_max_ == snd_una_) return;  // nothing outstanding: not a duplicate (RFC 5681 section 2)
  if (in_recovery_) {
    cwnd_ += mss_;  // RFC 5681 3.2 step 4: a segment has left the network
    return;
  }
  if (params_.fast_retransmit) {
    ++dupacks_;
    // RFC 6582 3.2 step 2: not for data sent before the last recovery or RTO.
    if (dupacks_ == params_.dupack_threshold && (!recover_set_ || snd_una_ > recover_)) {
      enter_fast_recovery();
      return;
    }
  }
  if (s.ece) on_echo(s.seq);
}

void TcpSender::on_echo(uint64_t ack) {
  if (params_.dctcp && params_.dctcp_cut == DctcpCut::kEveryWindow) {
    // htsim's rule: the mark ends slow start; the window's end cuts.
    if (params_.ecn) ssthresh_ = std::min(ssthresh_, cwnd_);
    return;
  }
  if (ecn_may_cut(ack)) ecn_cut();
}

void TcpSender::enter_fast_recovery() {
  // RFC 5681 3.2 steps 2-3; RFC 3168 6.1.2: ssthresh is not lowered again
  // for a window already reduced for ECN.
  const bool reduced = cwr_set_ && snd_una_ < cwr_end_;
  if (!reduced) ssthresh_ = std::max((snd_max_ - snd_una_) / 2, 2 * mss_);
  cwnd_ = ssthresh_ + uint64_t{params_.dupack_threshold} * mss_;
  ca_acked_ = 0;
  recover_set_ = true;
  recover_ = snd_max_;
  cwr_set_ = true;
  cwr_end_ = snd_max_;
  in_recovery_ = true;
  partial_ack_seen_ = false;
  retransmit_pending_ = true;
  ++counters_.fast_retransmits;
}

void TcpSender::grow(uint64_t acked) {
  if (cwnd_ < ssthresh_) {
    cwnd_ += std::min(acked, uint64_t{params_.slow_start_ack_limit_segments} * mss_);
    return;
  }
  // Congestion avoidance by byte counting (RFC 5681 section 3.1, RFC 3465
  // 2.1): one MSS per cwnd of bytes acknowledged.
  ca_acked_ += acked;
  if (ca_acked_ >= cwnd_) {
    ca_acked_ -= cwnd_;
    cwnd_ += mss_;
  }
}

bool TcpSender::ecn_may_cut(uint64_t ack) const {
  // Once per window (RFC 3168 6.1.2): only an ACK covering data sent after
  // the last reduction (ECN, fast recovery or RTO) cuts again.
  return params_.ecn && !in_recovery_ && (!cwr_set_ || ack > cwr_end_);
}

uint64_t TcpSender::dctcp_reduced() const {
  // DCTCP section 3.1: cwnd <- cwnd (1 - alpha/2). Floor of 2 MSS (RFC 5681
  // eq. 4's floor; Linux's reno and dctcp ssthresh).
  const uint64_t cut = static_cast<uint64_t>(static_cast<double>(cwnd_) * alpha_ / 2.0);
  return std::max(cwnd_ - cut, 2 * mss_);
}

void TcpSender::ecn_cut() {
  // RFC 3168: NewReno halves, as for a loss.
  ssthresh_ = params_.dctcp ? dctcp_reduced() : std::max(cwnd_ / 2, 2 * mss_);
  cwnd_ = std::min(cwnd_, ssthresh_);
  ca_acked_ = 0;
  cwr_set_ = true;
  cwr_end_ = snd_max_;
}

void TcpSender::dctcp_observe(uint64_t acked, bool ece) {
  // DCTCP section 3.1: F is the fraction of bytes acknowledged with ECE in
  // one window of data; alpha <- (1 - g) alpha + g F once per window. A
  // window closes when snd_una reaches what had been sent when it opened;
  // the next opens there, or at the next ACK if nothing is outstanding.
  if (!obs_open_) {
    obs_open_ = true;
    obs_end_ = snd_max_;
  }
  obs_acked_ += acked;
  if (ece) obs_marked_ += acked;
  if (snd_una_ >= obs_end_) {
    const double f = static_cast<double>(obs_marked_) / static_cast<double>(obs_acked_);
    alpha_ = (1.0 - params_.dctcp_g) * alpha_ + params_.dctcp_g * f;
    obs_acked_ = 0;
    obs_marked_ = 0;
    obs_end_ = snd_max_;
    obs_open_ = snd_max_ > snd_una_;
    if (params_.dctcp_cut == DctcpCut::kEveryWindow && params_.ecn && alpha_ > 0 && !in_recovery_) {
      // A cut never raises cwnd (below the floor, after an RTO). ca_acked_
      // stays: a window's ACKs reach cwnd just as it closes, so clearing it
      // here would stop all growth.
      cwnd_ = std::min(cwnd_, dctcp_reduced());
      ssthresh_ = cwnd_;
    }
  }
}

void TcpSender::on_timer(uint64_t now_ns) {
  if (allocated_ && now_ns >= alloc_until_ns_) end_allocation();
  if (done_ || rto_due_ns_ == kTransportNever || now_ns < rto_due_ns_) return;
  ++counters_.timeouts;
  // RFC 5681 eq. 4, LW = 1 MSS. A repeated timeout of the same data finds
  // the same FlightSize (no ACK came in between), so ssthresh is held as
  // RFC 5681 asks.
  ssthresh_ = std::max((snd_max_ - snd_una_) / 2, 2 * mss_);
  cwnd_ = mss_;
  ca_acked_ = 0;
  // RFC 6582 3.2 step 4; RFC 3168: marks from this window are old news.
  recover_set_ = true;
  recover_ = snd_max_;
  cwr_set_ = true;
  cwr_end_ = snd_max_;
  in_recovery_ = false;
  dupacks_ = 0;
  retransmit_pending_ = false;
  // Go back to the first unacknowledged byte.
  snd_nxt_ = snd_una_;
  // RFC 6298 (5.5); the retransmission restarts the timer (5.1, 5.6).
  rto_ns_ = rto_ns_ > params_.max_rto_ns / 2 ? params_.max_rto_ns : rto_ns_ * 2;
  rto_due_ns_ = kTransportNever;
}

}  // namespace sluice
