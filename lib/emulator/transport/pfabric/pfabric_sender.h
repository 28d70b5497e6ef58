#pragma once
// One pFabric flow's sender ("pFabric: Minimal Near-Optimal Datacenter
// Transport", Alizadeh et al., SIGCOMM 2013, section 4.2; the rules and
// their sources in docs/transports.md "pFabric"):
//   - every data segment carries its rank: the flow's bytes not yet
//     acknowledged (cumulatively or by a SACK block) when it is sent;
//   - the flow starts at line rate with a window of one BDP (not paced: the
//     host's NIC puts the window on the wire at its rate);
//   - each ACK that acknowledges new data grows the window as TCP does (slow
//     start below ssthresh, one segment per window above), up to an optional
//     cap;
//   - SACK blocks mark segments that arrived above the cumulative point;
//     they are not sent again, and do not count as in flight (bytes in
//     flight: from the cumulative point to the next byte to send, less the
//     SACKed segments among them);
//   - no fast retransmit: losses are found by a fixed retransmission
//     timeout; on it ssthresh becomes half the window (at least two
//     segments), the window one segment, and sending goes back to the first
//     unacknowledged byte (skipping SACKed segments);
//   - after probe_after consecutive timeouts (no ACK between them) the flow
//     is in probe mode: at each timeout it sends one segment of one byte at
//     the first unacknowledged byte, nothing else, until an ACK comes; then
//     it goes on in slow start from one segment.
// Plain state machine: time is an argument, nothing is allocated after
// construction (the SACK scoreboard is a bit per segment of the flow).

#include <cstdint>
#include <vector>

#include "lib/emulator/transport/flow_transport.h"
#include "lib/emulator/transport/pfabric/pfabric_params.h"
#include "lib/emulator/transport/segment.h"

namespace sluice {

class PfabricSender final : public FlowSender {
 public:
  PfabricSender(const PfabricParams& params, const TransportContext& ctx, const FlowSpec& flow);

  bool send(uint64_t now_ns, Segment* out) override;
  // Unpaced: the last send (or the flow's start) while the window has room
  // or a probe waits, meaning "now"; else kTransportNever.
  uint64_t send_due_ns() const override;
  void receive(uint64_t now_ns, const Segment& s) override;
  uint64_t timer_due_ns() const override { return rto_due_ns_; }
  void on_timer(uint64_t now_ns) override;
  uint64_t completed_ns() const override { return completed_ns_; }
  uint64_t rate_bps() const override { return 0; }
  uint64_t window_bytes() const override { return cwnd_; }
  const SenderCounters& counters() const override { return counters_; }

  // The rank the next data segment would carry: bytes not yet acknowledged.
  uint32_t rank() const;

  // State, for traces and tests.
  uint64_t cwnd_bytes() const { return cwnd_; }
  uint64_t ssthresh_bytes() const { return ssthresh_; }
  uint64_t snd_una() const { return snd_una_; }
  uint64_t snd_nxt() const { return snd_nxt_; }
  uint64_t sacked_bytes() const { return sacked_bytes_; }
  uint64_t rto_ns() const { return rto_ns_; }
  bool probing() const { return probing_; }
  uint32_t consecutive_timeouts() const { return consecutive_timeouts_; }
  uint64_t probes() const { return probes_; }

 private:
  uint64_t segment_end(uint64_t seq) const;
  bool sacked(uint64_t seq) const { return sacked_[seq / mss_]; }
  void skip_sacked();
  bool can_send() const;
  void take_sack(uint64_t start, uint64_t end);
  void advance(uint64_t now_ns, uint64_t ack);
  void grow(uint64_t acked);

  const PfabricParams params_;
  const FlowSpec flow_;
  const uint64_t mss_;
  const uint64_t rto_ns_;
  const uint64_t max_window_;  // kTransportNever: no cap

  // Sequence space (bytes from 0); segments start at multiples of mss_.
  uint64_t snd_una_ = 0;        // first byte not acknowledged cumulatively
  uint64_t snd_nxt_ = 0;        // next byte to send (back to snd_una_ on a timeout)
  uint64_t snd_max_ = 0;        // one past the highest byte ever sent
  std::vector<bool> sacked_;    // per segment: a SACK block covered it
  uint64_t sacked_bytes_ = 0;   // of segments at or above snd_una_
  uint64_t sacked_behind_ = 0;  // of segments in [snd_una_, snd_nxt_)
  bool done_ = false;
  uint64_t completed_ns_ = 0;
  uint64_t last_send_ns_ = 0;

  uint64_t cwnd_;
  uint64_t ssthresh_ = kTransportNever;
  uint64_t ca_acked_ = 0;  // bytes acked toward the next segment in congestion avoidance

  uint64_t rto_due_ns_ = kTransportNever;
  uint32_t consecutive_timeouts_ = 0;
  bool probing_ = false;
  bool probe_pending_ = false;  // probe mode: a timeout owes one probe
  uint64_t probes_ = 0;

  SenderCounters counters_;
};

}  // namespace sluice
