#pragma once
// One flow's two ends as an emulated host runs them (lib/emulator/hosts/
// transport_host.h): the sender decides when the flow's next data segment
// may go and what it is, and reacts to ACKs, NACKs, CNPs and its timers; the
// receiver answers data with ACKs, NACKs and CNPs. Both are plain state
// machines: time is always an argument (fabric ns), nothing is allocated
// after construction, nothing reads a clock. Each transport (tcp/, rdma/,
// dcqcn/, hpcc/, timely/) implements them; docs/transports.md has the rules.

#include <cstdint>

#include "lib/emulator/transport/segment.h"

namespace sluice {

constexpr uint64_t kTransportNever = UINT64_MAX;

// What every flow of a host knows about its host and link.
struct TransportContext {
  uint64_t link_rate_bps = 100'000'000'000;  // the host's NIC rate
  uint32_t max_payload = 1000;               // payload bytes of a full data segment (MSS)
  uint32_t header_bytes = 78;    // frame bytes beyond the payload (Ethernet..transport header)
  uint32_t wire_overhead = 24;   // FCS, preamble, inter-frame gap
  uint64_t base_rtt_ns = 8'000;  // the fabric's base RTT (a BDP's time), for caps and defaults
};

// The flow as the flow list gives it.
struct FlowSpec {
  uint32_t id = 0;
  uint64_t bytes = 0;     // payload bytes to deliver
  uint64_t start_ns = 0;  // when the application hands the flow over
};

// Counters a sender keeps (for the host's summary).
struct SenderCounters {
  uint64_t data_segments = 0;     // data segments sent, retransmissions included
  uint64_t retransmitted = 0;     // data segments sent again
  uint64_t timeouts = 0;          // RTO / go-back-N timer expiries
  uint64_t fast_retransmits = 0;  // TCP fast retransmits
  uint64_t nacks = 0;             // NACKs taken (go-back-N rewinds)
  uint64_t cnps = 0;              // CNPs taken
  uint64_t ecn_echoes = 0;        // ACKs with ECE
};

class FlowSender {
 public:
  virtual ~FlowSender() = default;
  // The next data segment the flow may hand its NIC at now_ns: true with
  // *out filled (kind kData, flow, seq, bytes, ts_ns = now_ns, int_request),
  // the segment counted as sent; false when nothing may go now.
  virtual bool send(uint64_t now_ns, Segment* out) = 0;
  // The earliest instant send() could return true with nothing received
  // meanwhile (pacing); kTransportNever while it waits for an ACK or timer,
  // or has nothing left to send. Never earlier than the last send.
  virtual uint64_t send_due_ns() const = 0;
  // An ACK, NACK or CNP of this flow arrives.
  virtual void receive(uint64_t now_ns, const Segment& s) = 0;
  // The sender's timers (RTO, DCQCN's alpha and rate timers, ...): when next
  // due (kTransportNever: none), and their handling at that instant.
  virtual uint64_t timer_due_ns() const = 0;
  virtual void on_timer(uint64_t now_ns) = 0;
  // The instant of the ACK that acknowledged the last byte; 0 before.
  virtual uint64_t completed_ns() const = 0;
  // For traces: the pacing rate (bps; 0 when window-only) and the window
  // (bytes; kTransportNever when rate-only) now.
  virtual uint64_t rate_bps() const = 0;
  virtual uint64_t window_bytes() const = 0;
  virtual const SenderCounters& counters() const = 0;
  // Flowtune's endpoint pacing ("Flowtune: Flowlet Control for Datacenter
  // Networks", section 4: a server that receives a rate for a flow opens
  // its window and paces it at that rate): the allocator gave the flow
  // rate_bps until until_ns. A transport without it ignores it.
  virtual void set_allocation(uint64_t /*now_ns*/, uint64_t /*rate_bps*/, uint64_t /*until_ns*/) {}
};

class FlowReceiver {
 public:
  static constexpr uint32_t kMaxReplies = 2;  // e.g. an ACK and a CNP
  virtual ~FlowReceiver() = default;
  // A data segment of this flow arrives at now_ns: the replies it causes
  // (ACK, NACK, CNP) written to out[0..kMaxReplies), their number returned.
  virtual uint32_t receive(uint64_t now_ns, const Segment& data, Segment* out) = 0;
  // Delayed-ACK timer: when due (kTransportNever: none), and what it sends.
  virtual uint64_t timer_due_ns() const { return kTransportNever; }
  virtual uint32_t on_timer(uint64_t /*now_ns*/, Segment* /*out*/) { return 0; }
  // Bytes delivered in order so far.
  virtual uint64_t delivered_bytes() const = 0;
};

}  // namespace sluice
