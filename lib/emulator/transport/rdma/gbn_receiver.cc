#include "lib/emulator/transport/rdma/gbn_receiver.h"

namespace sluice {

GbnReceiver::GbnReceiver(const GbnParams& params, const TransportContext& /*ctx*/,
                         const FlowSpec& flow)
    : params_(params), flow_(flow) {
  if (params_.ack_every == 0) params_.ack_every = 1;
}

void GbnReceiver::reply(SegmentKind kind, const Segment& data, Segment* out) const {
  reset_segment(out);
  out->kind = kind;
  out->flow = flow_.id;
  out->seq = expected_;
  out->ece = data.ecn == kEcnCe;
  out->ue_echo = data.ecn == kEcnUe;
  out->ts_ns = data.ts_ns;
  out->int_hops = data.int_hops > kMaxIntHops ? kMaxIntHops : data.int_hops;
  for (uint32_t i = 0; i < out->int_hops; ++i) out->hops[i] = data.hops[i];
}

uint32_t GbnReceiver::receive(uint64_t now_ns, const Segment& data, Segment* out) {
  if (data.kind != SegmentKind::kData) return 0;
  uint32_t n = 0;
  const uint64_t end = data.seq + data.bytes;
  if (data.seq <= expected_ && end > expected_) {
    // In order (a segment overlapping the expected byte counts as in order:
    // its new part is taken).
    expected_ = end;
    nacked_ = false;
    ++unacked_;
    if (unacked_ >= params_.ack_every || expected_ >= flow_.bytes) {
      reply(SegmentKind::kAck, data, &out[n++]);
      unacked_ = 0;
      ++acks_sent_;
    }
  } else if (data.seq > expected_) {
    // Out of order: discarded. The NACK is cumulative too.
    if (!(params_.nack_once_per_gap && nacked_)) {
      reply(SegmentKind::kNack, data, &out[n++]);
      nacked_ = true;
      unacked_ = 0;
      ++nacks_sent_;
    }
  } else if (data.bytes != 0) {
    // Duplicate (all of it below the expected byte): tell the sender how far
    // the receiver is, so a sender that went back too far skips ahead.
    reply(SegmentKind::kAck, data, &out[n++]);
    unacked_ = 0;
    ++acks_sent_;
  }

  // Notification point: CE-marked data of any order counts (the mark is the
  // path's, whatever happens to the payload).
  if (data.ecn == kEcnCe && params_.cnp_interval_ns != 0 &&
      (!cnp_sent_ || now_ns - last_cnp_ns_ >= params_.cnp_interval_ns)) {
    Segment& cnp = out[n++];
    cnp = Segment{};
    cnp.kind = SegmentKind::kCnp;
    cnp.flow = flow_.id;
    cnp.ts_ns = data.ts_ns;
    cnp_sent_ = true;
    last_cnp_ns_ = now_ns;
    ++cnps_sent_;
  }
  return n;
}

}  // namespace sluice
