#pragma once
// An emulated end host that runs transports (docs/transports.md): the flows
// of the flow list that start at its address (one sender each) and end at it
// (one receiver each), on the fabric's clock. The host sits above its NIC
// (lib/emulator/nic/host_nic.h, driven by the capture-file port that owns both):
//   - poll(now) hands the NIC what is due: first the replies its receivers
//     owe (ACK, NACK, CNP; in the order they were caused), then data from
//     senders whose pacing or window lets them send, in order of due time
//     and flow;
//   - a sender has at most one data segment in the NIC that has not gone on
//     the wire yet (sent() tells it), so its next segment is decided when
//     the NIC can take it: rate and window changes act on the next packet,
//     as in a RoCE NIC's per-queue-pair scheduler;
//   - receive(now, segment) gives a frame that reached the host to its flow.
// next_due_ns() says when poll() next has something to do. Every sender is
// an element of a calendar keyed by its due time (the flow's start, its
// pacing, its timers), so a host with thousands of flows visits only the
// due ones. All state is allocated at construction; nothing per packet.

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "lib/emulator/event_calendar.h"
#include "lib/emulator/hosts/flow_index.h"
#include "lib/emulator/hosts/flow_list.h"
#include "lib/emulator/transport/flow_transport.h"

namespace sluice {

// Builds one flow's two ends (lib/emulator/hosts/transport_factory.h).
class TransportMaker {
 public:
  virtual ~TransportMaker() = default;
  virtual std::unique_ptr<FlowSender> sender(const FlowSpec& f) const = 0;
  virtual std::unique_ptr<FlowReceiver> receiver(const FlowSpec& f) const = 0;
  // Data asks the switches for INT records (HPCC).
  virtual bool wants_int() const { return false; }
};

// Where poll() puts segments: the NIC. false when it is full (the host
// waits for a sent()).
class SegmentSink {
 public:
  virtual ~SegmentSink() = default;
  // tag: what sent() will be given back (data), or kReplyTag.
  virtual bool emit(const Segment& s, uint32_t dst_ip, uint32_t tag) = 0;
};

// One flow's outcome, for the completions file.
struct FlowOutcome {
  uint32_t id;
  uint32_t src_ip, dst_ip;
  uint64_t bytes;
  uint64_t start_ns;      // relative to the run's start
  uint64_t completed_ns;  // the ACK of its last byte at the sender, relative; 0: unfinished
  bool started;
  bool incast;
  SenderCounters counters;
};

// Where a flow's last data went, seen at its receiver: the data segment
// whose arrival completed the flow's bytes, when it left the sender's NIC
// and when it arrived, and when the ACK the receiver sent next left this
// host's NIC (relative to the run's start). With the flow's start and its
// finish at the sender, these split its FCT into four parts that add up to
// it exactly (docs/transports.md, "Completions").
struct FlowReceipt {
  uint32_t id;
  uint64_t sent_ns;     // the completing segment left the sender's NIC
  uint64_t arrived_ns;  // and reached this host
  uint64_t acked_ns;    // this host's next ACK left its NIC (0: not yet)
};

struct HostCounters {
  uint64_t data_sent = 0;      // data segments handed to the NIC
  uint64_t replies_sent = 0;   // ACK, NACK, CNP handed to the NIC
  uint64_t data_received = 0;  // data segments of this host's flows
  uint64_t replies_received = 0;
  uint64_t stray = 0;           // transport frames of no flow of this host
  uint64_t reply_overflow = 0;  // replies dropped: the reply ring was full
  uint64_t nic_full = 0;        // polls that stopped because the NIC was full
};

class TransportHost {
 public:
  static constexpr uint32_t kReplyTag = UINT32_MAX;
  // Tags from here on are replies: kReplyTag, or the first ACK a receiver
  // sends once its flow is whole (kFinalAckTag + its receiver's index).
  static constexpr uint32_t kFinalAckTag = uint32_t{1} << 31;
  static bool is_reply(uint32_t tag) { return tag >= kFinalAckTag; }
  static constexpr uint32_t kReplyRing = 4096;     // replies held at most (powers of two)
  static constexpr uint32_t kFirstReplyRing = 16;  // the ring's first size, doubled as needed

  // The host at `ip` (host order) takes its flows from `flows`; `maker`
  // builds their ends at start() and must live until then.
  TransportHost(uint32_t ip, const std::vector<FlowListEntry>& flows, const TransportMaker& maker);
  // Flow times count from start_ns (once, before the first poll).
  void start(uint64_t start_ns);

  uint32_t ip() const { return ip_; }
  size_t senders() const { return send_.size(); }
  size_t receivers() const { return recv_.size(); }

  // Hands the sink everything due at now_ns (see the top).
  void poll(uint64_t now_ns, SegmentSink& sink);
  // The NIC put the segment tagged `tag` (data, or kReplyTag) on the wire.
  void sent(uint32_t tag, uint64_t now_ns);
  // A transport frame reached the host at now_ns.
  void receive(uint64_t now_ns, const Segment& s);
  // Flowtune: the allocator gave flow `flow_id` (a flow this host sends)
  // rate_bps until until_ns; its sender paces itself at it (false: no such
  // flow here, or it is done).
  bool set_allocation(uint32_t flow_id, uint64_t now_ns, uint64_t rate_bps, uint64_t until_ns);
  // When poll() next has something to do (kTransportNever: nothing until a
  // frame arrives or the NIC sends).
  uint64_t next_due_ns() const;

  // Every sender's flow has its last byte acknowledged.
  bool all_done() const { return done_ == send_.size(); }
  size_t done() const { return done_; }
  void outcomes(std::vector<FlowOutcome>* out) const;
  // The flows this host received whole.
  void receipts(std::vector<FlowReceipt>* out) const;
  const HostCounters& counters() const { return counters_; }
  // In-flight view for traces: flow index -> sender (nullptr past the end).
  const FlowSender* sender_at(size_t i) const {
    return i < send_.size() ? send_[i].sender.get() : nullptr;
  }

 private:
  struct SendFlow {
    FlowListEntry flow;
    std::unique_ptr<FlowSender> sender;
    bool started = false;
    bool in_nic = false;  // a data segment waits in the NIC
    bool done = false;
    // send() said no at the last visit: not asked again until something
    // changes (a reply, a timer, the NIC), or the poll would spin.
    bool refused = false;
    // The NIC was full when this flow's segment was due: it waits here and
    // goes first when the NIC has room (the sender counted it as sent).
    bool holding = false;
    Segment held{};
  };
  struct RecvFlow {
    FlowListEntry flow;
    std::unique_ptr<FlowReceiver> receiver;
    bool whole = false;     // every byte delivered; then the FlowReceipt's times
    bool ack_owed = false;  // whole, and its next ACK not yet handed over
    uint64_t sent_ns = 0, arrived_ns = 0, acked_ns = 0;
  };
  // A line each, the segment's head in the first (segment.h).
  struct alignas(64) Reply {
    uint32_t dst_ip;
    uint32_t tag;  // kReplyTag, or a final ACK's
    Segment s;
  };

  void visit(uint32_t i, uint64_t now_ns, SegmentSink& sink);
  void reschedule(uint32_t i, uint64_t now_ns);
  void push_reply(const Segment& s, uint32_t dst_ip, uint32_t tag);
  void push_replies(uint32_t r, const Segment* out, uint32_t n);
  void note_done(uint32_t i);
  void emit_data(uint32_t i, const Segment& seg, SegmentSink& sink);

  uint32_t ip_;
  const TransportMaker* maker_ = nullptr;  // until start()
  uint64_t start_ns_ = 0;
  bool wants_int_;
  std::vector<SendFlow> send_;
  std::vector<RecvFlow> recv_;
  FlowIndex send_of_;           // flow id -> send_ index
  FlowIndex recv_of_;           // flow id -> recv_ index
  EventCalendar cal_;           // senders, then receivers (delayed-ACK timers)
  std::vector<Reply> replies_;  // ring, kFirstReplyRing..kReplyRing
  uint32_t reply_head_ = 0, reply_count_ = 0;
  bool nic_blocked_ = false;
  size_t done_ = 0;
  HostCounters counters_;
  // Where a sender or a receiver writes the segments it makes. Each writes
  // them afresh (reset_segment, and the INT records it stamps) before they
  // are read, so a scratch kept here spares zeroing them a second time on
  // every call.
  Segment scratch_[FlowReceiver::kMaxReplies];
};

}  // namespace sluice
