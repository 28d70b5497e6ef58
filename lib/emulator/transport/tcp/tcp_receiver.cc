// TCP / DCTCP receiver: see tcp_receiver.h for the rules and sources.
#include "lib/emulator/transport/tcp/tcp_receiver.h"

#include <algorithm>

namespace sluice {

TcpReceiver::TcpReceiver(const TcpParams& params, const TransportContext& ctx, const FlowSpec& flow)
    : ack_every_(std::max(params.ack_every, 1u)),
      delayed_ack_ns_(params.delayed_ack_ns),
      dctcp_(params.dctcp),
      flow_id_(flow.id),
      flow_bytes_(flow.bytes),
      mss_(ctx.max_payload > 0 ? ctx.max_payload : 1),
      received_((flow.bytes + mss_ - 1) / mss_, false) {}

uint64_t TcpReceiver::segment_end(uint64_t index) const {
  return std::min((index + 1) * mss_, flow_bytes_);
}

void TcpReceiver::ack(Segment* out) {
  reset_segment(out);
  out->kind = SegmentKind::kAck;
  out->flow = flow_id_;
  out->seq = rcv_nxt_;
  out->ece = held_ce_;
  out->ue_echo = held_ue_;
  out->ts_ns = held_ts_ns_;
  held_ = 0;
  held_ce_ = false;
  held_ue_ = false;
  delack_due_ns_ = kTransportNever;
}

uint32_t TcpReceiver::receive(uint64_t now_ns, const Segment& data, Segment* out) {
  if (data.kind != SegmentKind::kData || data.seq >= flow_bytes_ || data.seq % mss_ != 0) {
    return 0;
  }
  const bool ce = data.ecn == kEcnCe;
  uint32_t n = 0;
  if (dctcp_ && ce != ce_state_) {
    // DCTCP's state change: what is held goes now, with the old state's ECE.
    if (held_ > 0) ack(&out[n++]);
    ce_state_ = ce;
  }
  ++held_;
  held_ce_ = held_ce_ || ce;
  held_ue_ = held_ue_ || data.ecn == kEcnUe;
  held_ts_ns_ = data.ts_ns;

  const uint64_t index = data.seq / mss_;
  bool now = true;  // duplicates and out-of-order segments are ACKed at once
  if (!received_[index]) {
    received_[index] = true;
    const uint64_t end = segment_end(index);
    const bool fills_gap = data.seq == rcv_nxt_ && rcv_high_ > end;
    rcv_high_ = std::max(rcv_high_, end);
    if (data.seq == rcv_nxt_) {
      for (uint64_t i = index; i < received_.size() && received_[i]; ++i) rcv_nxt_ = segment_end(i);
      now = fills_gap || held_ >= ack_every_;
    }
  }
  if (now) {
    ack(&out[n++]);
  } else if (delack_due_ns_ == kTransportNever) {
    delack_due_ns_ = now_ns + delayed_ack_ns_;
  }
  return n;
}

uint32_t TcpReceiver::on_timer(uint64_t now_ns, Segment* out) {
  if (delack_due_ns_ == kTransportNever || now_ns < delack_due_ns_) return 0;
  if (held_ == 0) {
    delack_due_ns_ = kTransportNever;
    return 0;
  }
  ack(out);
  return 1;
}

}  // namespace sluice
