// pFabric's receiver: see pfabric_receiver.h for the rules and sources.
#include "lib/emulator/transport/pfabric/pfabric_receiver.h"

#include <algorithm>

namespace sluice {

PfabricReceiver::PfabricReceiver(const TransportContext& ctx, const FlowSpec& flow)
    : flow_id_(flow.id),
      flow_bytes_(flow.bytes),
      mss_(ctx.max_payload > 0 ? ctx.max_payload : 1),
      received_((flow.bytes + mss_ - 1) / mss_, false) {}

uint64_t PfabricReceiver::segment_end(uint64_t index) const {
  return std::min((index + 1) * mss_, flow_bytes_);
}

uint32_t PfabricReceiver::receive(uint64_t /*now_ns*/, const Segment& data, Segment* out) {
  if (data.kind != SegmentKind::kData || data.seq >= flow_bytes_ || data.seq % mss_ != 0) return 0;
  const uint64_t index = data.seq / mss_;
  const uint64_t end = segment_end(index);
  // A whole segment is taken; a shorter one (a probe) only draws the ACK.
  const bool whole = data.seq + data.bytes == end;
  if (whole && !received_[index]) {
    received_[index] = true;
    for (uint64_t i = rcv_nxt_ / mss_; i < received_.size() && received_[i]; ++i)
      rcv_nxt_ = segment_end(i);
  }
  reset_segment(out);
  out->kind = SegmentKind::kAck;
  out->flow = flow_id_;
  out->seq = rcv_nxt_;
  out->ts_ns = data.ts_ns;
  out->ece = data.ecn == kEcnCe;
  out->ue_echo = data.ecn == kEcnUe;
  out->has_rank = true;
  out->rank = 0;
  if (whole && data.seq > rcv_nxt_) {
    out->has_sack = true;
    out->sack_start = data.seq;
    out->sack_end = end;
  }
  return 1;
}

}  // namespace sluice
