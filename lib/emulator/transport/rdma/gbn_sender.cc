#include "lib/emulator/transport/rdma/gbn_sender.h"

#include <algorithm>
#include <utility>

namespace sluice {

GbnSender::GbnSender(const GbnParams& params, const TransportContext& ctx, const FlowSpec& flow,
                     std::unique_ptr<RateControl> cc)
    : params_(params), ctx_(ctx), flow_(flow), cc_(std::move(cc)) {
  if (ctx_.max_payload == 0) ctx_.max_payload = 1;
  next_send_ns_ = flow_.start_ns;
}

uint64_t GbnSender::nic_window_bytes() const {
  const uint64_t w = params_.window_bytes;
  if (w == 0 || !params_.window_follows_rate || ctx_.link_rate_bps == 0) return w;
  // Integer arithmetic as the ns-3 queue pair's GetWin, without its overflow.
  const auto scaled = static_cast<unsigned __int128>(w) * cc_->rate_bps() / ctx_.link_rate_bps;
  return std::max<uint64_t>(static_cast<uint64_t>(std::min<unsigned __int128>(scaled, w)), 1);
}

uint32_t GbnSender::next_payload() const {
  const uint64_t left = flow_.bytes - snd_nxt_;
  return static_cast<uint32_t>(std::min<uint64_t>(ctx_.max_payload, left));
}

uint64_t GbnSender::send_due_ns() const {
  if (complete_ || snd_nxt_ >= flow_.bytes) return kTransportNever;
  const uint64_t in_flight = snd_nxt_ - snd_una_;
  const uint64_t window = window_bytes();
  // A window below one segment must not stall the flow: one segment may go
  // whenever nothing is in flight.
  if (window != kTransportNever && in_flight > 0 && in_flight + next_payload() > window) {
    return kTransportNever;
  }
  return std::max(flow_.start_ns, next_send_ns_);
}

bool GbnSender::send(uint64_t now_ns, Segment* out) {
  const uint64_t due = send_due_ns();
  if (due == kTransportNever || now_ns < due) return false;
  const uint32_t payload = next_payload();

  reset_segment(out);
  out->kind = SegmentKind::kData;
  out->flow = flow_.id;
  out->seq = snd_nxt_;
  out->bytes = payload;
  out->ts_ns = now_ns;

  ++counters_.data_segments;
  if (snd_nxt_ < snd_max_) ++counters_.retransmitted;
  snd_nxt_ += payload;
  snd_max_ = std::max(snd_max_, snd_nxt_);
  if (rto_due_ns_ == kTransportNever && params_.rto_ns != 0) rto_due_ns_ = now_ns + params_.rto_ns;

  // Pacing at the rate this segment goes at. The remainder of the division
  // is carried to the next gap, in units of 1 / rate ns; when the rate has
  // changed it is rescaled to the new unit.
  const uint64_t rate = std::max<uint64_t>(cc_->rate_bps(), 1);
  if (pace_rate_ != 0 && pace_rate_ != rate) {
    pace_carry_ =
        static_cast<uint64_t>(static_cast<unsigned __int128>(pace_carry_) * rate / pace_rate_);
  }
  pace_rate_ = rate;
  const uint64_t frame_bits =
      (static_cast<uint64_t>(payload) + ctx_.header_bytes + ctx_.wire_overhead) * 8;
  const unsigned __int128 bit_ns =
      static_cast<unsigned __int128>(frame_bits) * 1'000'000'000ull + pace_carry_;
  next_send_ns_ = now_ns + static_cast<uint64_t>(bit_ns / rate);
  pace_carry_ = static_cast<uint64_t>(bit_ns % rate);

  cc_->on_send(now_ns, payload);
  return true;
}

uint64_t GbnSender::advance(uint64_t now_ns, uint64_t seq) {
  seq = std::min(seq, flow_.bytes);
  if (seq <= snd_una_) return 0;
  const uint64_t acked = seq - snd_una_;
  snd_una_ = seq;
  // An ACK can overtake a rewind (data sent before a timeout is
  // acknowledged after it): never resend what is acknowledged.
  snd_nxt_ = std::max(snd_nxt_, snd_una_);
  rto_due_ns_ =
      (snd_nxt_ > snd_una_ && params_.rto_ns != 0) ? now_ns + params_.rto_ns : kTransportNever;
  if (snd_una_ >= flow_.bytes && !complete_) {
    complete_ = true;
    completed_ns_ = now_ns;
    rto_due_ns_ = kTransportNever;
  }
  return acked;
}

void GbnSender::on_ack(uint64_t now_ns, const Segment& s) {
  if (s.ece) ++counters_.ecn_echoes;
  AckInfo info;
  info.acked_bytes = advance(now_ns, s.seq);
  info.snd_una = snd_una_;
  info.snd_nxt = snd_nxt_;
  cc_->on_ack(now_ns, s, info);
}

void GbnSender::on_nack(uint64_t now_ns, const Segment& s) {
  ++counters_.nacks;
  if (s.ece) ++counters_.ecn_echoes;
  AckInfo info;
  info.acked_bytes = advance(now_ns, s.seq);
  if (!complete_) {
    // Go back N: everything from the receiver's expected byte is sent
    // again. A NACK older than the cumulative point rewinds to snd_una
    // (as HPCC's ns-3 RecoverQueue does).
    snd_nxt_ = snd_una_;
    rto_due_ns_ = kTransportNever;  // nothing in flight; the next send arms it
  }
  info.snd_una = snd_una_;
  info.snd_nxt = snd_nxt_;
  cc_->on_nack(now_ns, s, info);
}

void GbnSender::receive(uint64_t now_ns, const Segment& s) {
  switch (s.kind) {
    case SegmentKind::kAck:
      on_ack(now_ns, s);
      break;
    case SegmentKind::kNack:
      on_nack(now_ns, s);
      break;
    case SegmentKind::kCnp:
      ++counters_.cnps;
      cc_->on_cnp(now_ns, s);
      break;
    case SegmentKind::kData:
      break;  // not for a sender
  }
}

uint64_t GbnSender::timer_due_ns() const {
  if (complete_) return kTransportNever;
  return std::min(rto_due_ns_, cc_->timer_due_ns());
}

void GbnSender::on_timer(uint64_t now_ns) {
  if (complete_) return;
  if (rto_due_ns_ <= now_ns) {
    ++counters_.timeouts;
    snd_nxt_ = snd_una_;
    rto_due_ns_ = kTransportNever;  // re-armed by the resend
  }
  if (cc_->timer_due_ns() <= now_ns) cc_->on_timer(now_ns);
}

}  // namespace sluice
