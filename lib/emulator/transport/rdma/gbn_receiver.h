#pragma once
// A RoCE NIC's receiving side of one flow with go-back-N reliability, and
// DCQCN's notification point ("Congestion Control for Large-Scale RDMA
// Deployments", Zhu et al., SIGCOMM 2015, section 3.1, "NP algorithm"):
//   - in-order data advances the expected byte; every ack_every-th in-order
//     segment, and the one with the flow's last byte, is acknowledged
//     cumulatively;
//   - out-of-order data (beyond the expected byte) is discarded and answered
//     with a NACK carrying the expected byte, once per gap when
//     nack_once_per_gap (later out-of-order data gets no reply until the
//     expected byte arrives);
//   - duplicate data (before the expected byte) is answered with an ACK;
//   - every ACK or NACK echoes the data's send time, INT records, CE (ece)
//     and UE (ue_echo, TCD) marks;
//   - CE-marked data also causes a CNP unless one went for this flow less
//     than cnp_interval_ns ago.
// At most two replies per data segment (ACK or NACK, and a CNP).

#include <cstdint>

#include "lib/emulator/transport/flow_transport.h"
#include "lib/emulator/transport/rdma/gbn_params.h"
#include "lib/emulator/transport/segment.h"

namespace sluice {

class GbnReceiver : public FlowReceiver {
 public:
  GbnReceiver(const GbnParams& params, const TransportContext& ctx, const FlowSpec& flow);

  uint32_t receive(uint64_t now_ns, const Segment& data, Segment* out) override;
  uint64_t delivered_bytes() const override { return expected_; }

  // State, for tests and traces.
  uint64_t expected() const { return expected_; }
  bool in_gap() const { return nacked_; }
  uint64_t cnps_sent() const { return cnps_sent_; }
  uint64_t nacks_sent() const { return nacks_sent_; }
  uint64_t acks_sent() const { return acks_sent_; }

 private:
  // An ACK or NACK of `kind` carrying expected_, echoing `data`.
  void reply(SegmentKind kind, const Segment& data, Segment* out) const;

  GbnParams params_;
  FlowSpec flow_;
  uint64_t expected_ = 0;
  uint32_t unacked_ = 0;  // in-order segments since the last ACK
  bool nacked_ = false;   // the gap at expected_ has been NACKed
  bool cnp_sent_ = false;
  uint64_t last_cnp_ns_ = 0;
  uint64_t cnps_sent_ = 0;
  uint64_t nacks_sent_ = 0;
  uint64_t acks_sent_ = 0;
};

}  // namespace sluice
