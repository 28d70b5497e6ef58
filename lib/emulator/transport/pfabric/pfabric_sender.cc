// pFabric's sender: see pfabric_sender.h for the rules and sources.
#include "lib/emulator/transport/pfabric/pfabric_sender.h"

#include <algorithm>

namespace sluice {
namespace {

// One BDP of the host's link, at least one segment.
uint64_t bdp_bytes(const TransportContext& ctx, uint64_t mss) {
  const unsigned __int128 b =
      static_cast<unsigned __int128>(ctx.link_rate_bps) * ctx.base_rtt_ns / 8'000'000'000ull;
  return std::max<uint64_t>(static_cast<uint64_t>(b), mss);
}

}  // namespace

PfabricSender::PfabricSender(const PfabricParams& params, const TransportContext& ctx,
                             const FlowSpec& flow)
    : params_(params),
      flow_(flow),
      mss_(ctx.max_payload > 0 ? ctx.max_payload : 1),
      rto_ns_(params.rto_ns != 0 ? params.rto_ns : std::max<uint64_t>(3 * ctx.base_rtt_ns, 1)),
      max_window_(params.max_window_bytes != 0 ? std::max<uint64_t>(params.max_window_bytes, mss_)
                                               : kTransportNever),
      sacked_((flow.bytes + mss_ - 1) / mss_, false),
      cwnd_(std::min(std::max<uint64_t>(params.init_window_bytes != 0 ? params.init_window_bytes
                                                                      : bdp_bytes(ctx, mss_),
                                        mss_),
                     max_window_)) {
  if (flow_.bytes == 0) {
    // Nothing to deliver: complete from the start.
    done_ = true;
    completed_ns_ = flow_.start_ns;
  }
}

uint64_t PfabricSender::segment_end(uint64_t seq) const {
  return std::min(seq - seq % mss_ + mss_, flow_.bytes);
}

uint32_t PfabricSender::rank() const {
  const uint64_t left = flow_.bytes - snd_una_ - sacked_bytes_;
  // UINT32_MAX is what switches give frames without a rank.
  return static_cast<uint32_t>(std::min<uint64_t>(left, UINT32_MAX - 1));
}

void PfabricSender::skip_sacked() {
  while (snd_nxt_ < snd_max_ && sacked(snd_nxt_)) {
    const uint64_t next = segment_end(snd_nxt_);
    sacked_behind_ += next - snd_nxt_;
    snd_nxt_ = next;
  }
}

// In flight: what was sent from the cumulative point up to the next byte to
// send, less what SACK blocks say arrived.
bool PfabricSender::can_send() const {
  if (done_) return false;
  if (probing_) return probe_pending_;
  if (snd_nxt_ >= flow_.bytes) return false;
  return segment_end(snd_nxt_) - snd_una_ - sacked_behind_ <= cwnd_;
}

uint64_t PfabricSender::send_due_ns() const {
  if (!can_send()) return kTransportNever;
  return std::max(flow_.start_ns, last_send_ns_);
}

bool PfabricSender::send(uint64_t now_ns, Segment* out) {
  if (now_ns < flow_.start_ns || !can_send()) return false;
  uint64_t seq;
  uint32_t bytes;
  if (probing_) {
    // A minimum-size packet with one byte of payload, to draw an ACK.
    probe_pending_ = false;
    ++probes_;
    seq = snd_una_;
    bytes = 1;
  } else {
    seq = snd_nxt_;
    const uint64_t end = segment_end(seq);
    bytes = static_cast<uint32_t>(end - seq);
    snd_nxt_ = end;
    skip_sacked();
  }
  if (seq < snd_max_) ++counters_.retransmitted;
  snd_max_ = std::max(snd_max_, seq + bytes);
  ++counters_.data_segments;
  if (rto_due_ns_ == kTransportNever) rto_due_ns_ = now_ns + rto_ns_;
  last_send_ns_ = now_ns;

  reset_segment(out);
  out->kind = SegmentKind::kData;
  out->flow = flow_.id;
  out->seq = seq;
  out->bytes = bytes;
  out->ts_ns = now_ns;
  out->has_rank = true;
  out->rank = rank();
  return true;
}

// Whole segments of [start, end) between the cumulative point and the
// highest byte sent.
void PfabricSender::take_sack(uint64_t start, uint64_t end) {
  end = std::min(end, snd_max_);
  uint64_t seq = std::max(start, snd_una_);
  if (seq % mss_ != 0) seq = segment_end(seq);
  while (seq < end && segment_end(seq) <= end) {
    const uint64_t next = segment_end(seq);
    if (!sacked(seq)) {
      sacked_[seq / mss_] = true;
      sacked_bytes_ += next - seq;
      if (seq < snd_nxt_) sacked_behind_ += next - seq;
    }
    seq = next;
  }
}

void PfabricSender::grow(uint64_t acked) {
  if (cwnd_ < ssthresh_) {
    cwnd_ += std::min(acked, mss_);  // slow start (RFC 5681 3.1)
  } else {
    // Congestion avoidance: a segment once a window's bytes are acknowledged.
    ca_acked_ += acked;
    while (ca_acked_ >= cwnd_) {
      ca_acked_ -= cwnd_;
      cwnd_ += mss_;
    }
  }
  cwnd_ = std::min(cwnd_, max_window_);
}

void PfabricSender::advance(uint64_t now_ns, uint64_t ack) {
  // SACKed segments now below the cumulative point no longer count apart.
  for (uint64_t seq = snd_una_; seq < ack; seq = segment_end(seq)) {
    if (!sacked(seq)) continue;
    sacked_bytes_ -= segment_end(seq) - seq;
    if (seq < snd_nxt_) sacked_behind_ -= segment_end(seq) - seq;
  }
  const uint64_t acked = ack - snd_una_;
  snd_una_ = ack;
  snd_nxt_ = std::max(snd_nxt_, snd_una_);
  if (snd_una_ == flow_.bytes) {
    done_ = true;
    completed_ns_ = now_ns;
    rto_due_ns_ = kTransportNever;
    return;
  }
  grow(acked);
  // Progress restarts the timer while data is out; the next send starts it
  // otherwise.
  rto_due_ns_ = snd_una_ < snd_max_ ? now_ns + rto_ns_ : kTransportNever;
}

void PfabricSender::receive(uint64_t now_ns, const Segment& s) {
  if (done_ || s.kind != SegmentKind::kAck) return;
  // Any ACK shows the path delivers: timeouts are no longer consecutive,
  // and a probing flow goes on in slow start from its one segment.
  consecutive_timeouts_ = 0;
  if (probing_) {
    probing_ = false;
    probe_pending_ = false;
    rto_due_ns_ = now_ns + rto_ns_;
  }
  if (s.has_sack) take_sack(s.sack_start, s.sack_end);
  // The cumulative point moves on segment boundaries only (a probe's byte
  // is not taken by the receiver), and never past what was sent.
  if (s.seq > snd_una_ && s.seq <= snd_max_ && (s.seq % mss_ == 0 || s.seq == flow_.bytes))
    advance(now_ns, s.seq);
  skip_sacked();
}

void PfabricSender::on_timer(uint64_t now_ns) {
  if (rto_due_ns_ == kTransportNever || now_ns < rto_due_ns_) return;
  if (done_) {
    rto_due_ns_ = kTransportNever;
    return;
  }
  ++counters_.timeouts;
  ++consecutive_timeouts_;
  ssthresh_ = std::max(cwnd_ / 2, 2 * mss_);
  cwnd_ = mss_;
  ca_acked_ = 0;
  snd_nxt_ = snd_una_;
  sacked_behind_ = 0;
  skip_sacked();
  if (params_.probe_after != 0 && consecutive_timeouts_ >= params_.probe_after) {
    probing_ = true;
    probe_pending_ = true;
  }
  rto_due_ns_ = now_ns + rto_ns_;
}

}  // namespace sluice
