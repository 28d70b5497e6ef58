#pragma once
// A RoCE NIC's congestion control for one flow (queue pair): the rate it
// paces the flow at and, for window-based schemes, a cap on bytes in
// flight. The go-back-N sender (gbn_sender.h) asks it before each packet and
// tells it what happened; DCQCN, HPCC, TIMELY and the BFC paper's fixed
// line-rate NIC implement it. Time is an argument (fabric ns).

#include <cstdint>

#include "lib/emulator/transport/flow_transport.h"
#include "lib/emulator/transport/segment.h"

namespace sluice {

// The sender's state when an ACK arrives.
struct AckInfo {
  uint64_t acked_bytes = 0;  // how far this ACK moved the cumulative point (0: none)
  uint64_t snd_una = 0;      // after the ACK: first byte not yet acknowledged
  uint64_t snd_nxt = 0;      // next new byte the sender would send
};

class RateControl {
 public:
  virtual ~RateControl() = default;
  // Pacing rate now (bps, > 0).
  virtual uint64_t rate_bps() const = 0;
  // Cap on payload bytes in flight (kTransportNever: none).
  virtual uint64_t window_bytes() const { return kTransportNever; }
  // A data segment of `bytes` payload goes at now_ns.
  virtual void on_send(uint64_t /*now_ns*/, uint32_t /*bytes*/) {}
  // An ACK arrives (ack carries echoed ts_ns, INT hops, ece / ue_echo).
  virtual void on_ack(uint64_t /*now_ns*/, const Segment& /*ack*/, const AckInfo& /*info*/) {}
  virtual void on_nack(uint64_t /*now_ns*/, const Segment& /*nack*/, const AckInfo& /*info*/) {}
  virtual void on_cnp(uint64_t /*now_ns*/, const Segment& /*cnp*/) {}
  // Its own timers (DCQCN's alpha and rate-increase timers).
  virtual uint64_t timer_due_ns() const { return kTransportNever; }
  virtual void on_timer(uint64_t /*now_ns*/) {}
};

}  // namespace sluice
