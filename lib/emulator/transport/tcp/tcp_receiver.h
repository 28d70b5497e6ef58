#pragma once
// One TCP flow's receiver: cumulative ACKs, each echoing the send time of the
// data segment that caused it. Out-of-order, duplicate and gap-filling
// segments are ACKed at once (RFC 5681 section 4.2); in-order ones every
// `ack_every` segments or when the delayed-ACK timer fires. The ECE bit
// reports CE on the segments the ACK covers. With TcpParams::dctcp, the
// two-state CE machine of "Data Center TCP (DCTCP)" (Alizadeh et al.,
// SIGCOMM 2010), section 3.1: when a segment's CE differs from the last
// one's, the segments held so far are ACKed at once with the old state, so
// that every ECE bit covers exactly the marked bytes.

#include <cstdint>
#include <vector>

#include "lib/emulator/transport/flow_transport.h"
#include "lib/emulator/transport/segment.h"
#include "lib/emulator/transport/tcp/tcp_params.h"

namespace sluice {

class TcpReceiver final : public FlowReceiver {
 public:
  TcpReceiver(const TcpParams& params, const TransportContext& ctx, const FlowSpec& flow);

  uint32_t receive(uint64_t now_ns, const Segment& data, Segment* out) override;
  uint64_t timer_due_ns() const override { return delack_due_ns_; }
  uint32_t on_timer(uint64_t now_ns, Segment* out) override;
  uint64_t delivered_bytes() const override { return rcv_nxt_; }

 private:
  void ack(Segment* out);
  uint64_t segment_end(uint64_t index) const;

  const uint32_t ack_every_;
  const uint64_t delayed_ack_ns_;
  const bool dctcp_;
  const uint32_t flow_id_;
  const uint64_t flow_bytes_;
  const uint64_t mss_;
  // Which of the flow's segments have arrived (segments start at multiples
  // of the MSS); sized once, at construction.
  std::vector<bool> received_;
  uint64_t rcv_nxt_ = 0;   // every byte below has arrived
  uint64_t rcv_high_ = 0;  // one past the highest byte that has arrived

  // Segments the next ACK reports.
  uint32_t held_ = 0;
  bool held_ce_ = false;
  bool held_ue_ = false;
  uint64_t held_ts_ns_ = 0;  // send time of the latest of them
  bool ce_state_ = false;    // DCTCP: CE of the last segment
  uint64_t delack_due_ns_ = kTransportNever;
};

}  // namespace sluice
