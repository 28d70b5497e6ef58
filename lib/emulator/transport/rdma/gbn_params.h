#pragma once
// Parameters of a RoCE NIC's go-back-N reliability and of DCQCN's
// notification point (the receiver side). The sender and receiver rules are
// in gbn_sender.h and gbn_receiver.h; the CNP rule is that of "Congestion
// Control for Large-Scale RDMA Deployments" (Zhu et al., SIGCOMM 2015),
// section 3.1, "NP algorithm". Defaults and their sources are listed in
// the transport notes (transport-doc-rdma.md).

#include <cstdint>

namespace sluice {

struct GbnParams {
  // The receiver acknowledges every ack_every-th in-order data segment and
  // always the one carrying the flow's last byte. 1: every segment (HPCC's
  // ns-3 runs with L2_ACK_INTERVAL 1). 0 is taken as 1.
  uint32_t ack_every = 1;
  // DCQCN notification point: when CE-marked data arrives, a CNP is sent
  // unless one was already sent for this flow less than this long ago.
  // 0: never send CNPs. The DCQCN paper's N = 50 us.
  uint64_t cnp_interval_ns = 50'000;
  // Go-back-N timeout: with bytes in flight and no acknowledgement progress
  // for this long, the sender resends from the first unacknowledged byte.
  // 500 us is the loss-recovery interval of both public RoCE simulators
  // (HPCC's and DCQCN's ns-3: the receiver's NACK re-generation interval,
  // and the DCQCN ns-3's wait-for-ACK timer), about 60 base RTTs of the
  // BFC paper's fabric: long enough that pauses (PFC, BFC) in a lossless
  // fabric do not fire it, short enough to bound a lost NACK's or lost
  // tail's cost. 0 disables the timer.
  uint64_t rto_ns = 500'000;
  // One NACK per gap: after NACKing a gap the receiver answers further
  // out-of-order data with nothing until the expected byte arrives (RoCE
  // NICs' "sequence error" state), so a burst in flight behind one loss
  // causes one rewind, not one per packet. false: NACK every out-of-order
  // segment.
  bool nack_once_per_gap = true;
  // A cap on payload bytes in flight on top of the congestion control's
  // window (0: none). The public RoCE simulators give every queue pair one
  // (HPCC's and Floodgate's ns-3, HAS_WIN 1: the fabric's largest BDP).
  uint64_t window_bytes = 0;
  // With window_bytes: the cap follows the congestion control's rate,
  // window_bytes x rate / line rate (at least one byte), so a flow cut to
  // a tenth of the line keeps a tenth of the window in flight (HPCC's and
  // Floodgate's ns-3 with VAR_WIN 1, RdmaQueuePair::GetWin). false: fixed.
  bool window_follows_rate = false;
};

}  // namespace sluice
