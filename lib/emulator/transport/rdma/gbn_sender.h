#pragma once
// A RoCE NIC's sending side of one flow (queue pair) with go-back-N
// reliability, as the RDMA congestion-control papers simulate it (DCQCN,
// HPCC, BFC's evaluation, section 6.2.1 "we use Go-Back-N"):
//   - segments of max_payload bytes (the last one shorter) go in order from
//     snd_nxt, paced at the congestion control's rate: the next segment
//     starts no earlier than the last one's start plus its frame time
//     (payload + header_bytes + wire_overhead) x 8 / rate, in whole ns with
//     the remainder carried, so a flow at a constant rate never drifts;
//   - payload bytes in flight (snd_nxt - snd_una) stay within the
//     congestion control's window and params.window_bytes (one segment may
//     always go when nothing is in flight);
//   - a cumulative ACK advances snd_una; a NACK also rewinds snd_nxt to it
//     (go back N); with bytes in flight and no progress for rto_ns, the
//     timer rewinds snd_nxt to snd_una;
//   - CNPs go to the congestion control, which also sees every ACK and
//     NACK (rate_control.h).
// Nothing is allocated after construction; time is an argument.

#include <cstdint>
#include <memory>

#include "lib/emulator/transport/flow_transport.h"
#include "lib/emulator/transport/rdma/gbn_params.h"
#include "lib/emulator/transport/rdma/rate_control.h"
#include "lib/emulator/transport/segment.h"

namespace sluice {

class GbnSender : public FlowSender {
 public:
  GbnSender(const GbnParams& params, const TransportContext& ctx, const FlowSpec& flow,
            std::unique_ptr<RateControl> cc);

  bool send(uint64_t now_ns, Segment* out) override;
  uint64_t send_due_ns() const override;
  void receive(uint64_t now_ns, const Segment& s) override;
  // The earlier of the go-back-N timeout and the congestion control's
  // timers; kTransportNever once the flow is complete.
  uint64_t timer_due_ns() const override;
  void on_timer(uint64_t now_ns) override;
  uint64_t completed_ns() const override { return completed_ns_; }
  uint64_t rate_bps() const override { return cc_->rate_bps(); }
  // The smaller of the congestion control's window and the NIC's cap
  // (params.window_bytes, scaled by the rate with window_follows_rate).
  uint64_t window_bytes() const override {
    const uint64_t cc = cc_->window_bytes();
    const uint64_t cap = nic_window_bytes();
    return cap != 0 && cap < cc ? cap : cc;
  }
  const SenderCounters& counters() const override { return counters_; }

  // State, for tests and traces.
  uint64_t snd_una() const { return snd_una_; }
  uint64_t snd_nxt() const { return snd_nxt_; }
  uint64_t rto_due_ns() const { return rto_due_ns_; }
  const RateControl& cc() const { return *cc_; }

 private:
  // params.window_bytes, or with window_follows_rate its share at the
  // current rate; 0: no cap.
  uint64_t nic_window_bytes() const;
  uint32_t next_payload() const;
  void on_ack(uint64_t now_ns, const Segment& s);
  void on_nack(uint64_t now_ns, const Segment& s);
  // snd_una_ moved to `seq` (>= the old value): keeps snd_nxt_ at or past
  // it, restarts or stops the timeout, notes completion.
  uint64_t advance(uint64_t now_ns, uint64_t seq);

  GbnParams params_;
  TransportContext ctx_;
  FlowSpec flow_;
  std::unique_ptr<RateControl> cc_;

  uint64_t snd_una_ = 0;       // first byte not acknowledged
  uint64_t snd_nxt_ = 0;       // next byte to send
  uint64_t snd_max_ = 0;       // one past the highest byte ever sent
  uint64_t next_send_ns_ = 0;  // pacing: earliest start of the next segment
  uint64_t pace_carry_ = 0;    // pacing remainder, in units of 1 / pace_rate_ ns
  uint64_t pace_rate_ = 0;     // the rate pace_carry_ is expressed in
  uint64_t rto_due_ns_ = kTransportNever;
  uint64_t completed_ns_ = 0;
  bool complete_ = false;
  SenderCounters counters_;
};

}  // namespace sluice
