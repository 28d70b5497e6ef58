#pragma once
// Flowtune at one edge switch, on one worker lcore (docs/mechanisms/flowtune.md,
// "Edge switches"): the flowlet table and pacer of the flows that enter by
// the host ports this lcore owns, the packets the pacer holds, and the UDP
// socket to the allocator. Everything here is written by that lcore only;
// the counters are read by the scraper and the summary.
//
// The socket is a kernel UDP socket, connected to the allocator so that only
// its datagrams are received, non-blocking, touched every kPollNs at most
// (one recv that usually finds nothing, and one send per full datagram or
// per poll with something pending). Each lcore has its own socket, so the
// allocator tells their flow ids apart by the sending port.

#include <cstdint>
#include <string>

#include "lib/common/relaxed_counter.h"
#include "lib/config/config.h"
#include "lib/flowtune/flow_pacer.h"
#include "lib/flowtune/flowlet_table.h"
#include "lib/flowtune/flowtune_outbox.h"
#include "lib/flowtune/flowtune_wire.h"
#include "lib/flowtune/paced_queues.h"

namespace sluice {

class FlowtuneEdge {
 public:
  static constexpr uint64_t kPollNs = 20'000;
  static constexpr unsigned kMaxDatagramsPerPoll = 16;

  explicit FlowtuneEdge(const FlowtuneConfig& cfg);
  ~FlowtuneEdge();
  FlowtuneEdge(const FlowtuneEdge&) = delete;
  FlowtuneEdge& operator=(const FlowtuneEdge&) = delete;

  // Creates the socket and connects it to the allocator; false with *error.
  bool open(std::string* error);

  // Queues a datagram's worth of news for the allocator (sent at once when a
  // datagram fills, else at the next poll).
  void report_start(uint32_t flow_id, uint32_t src_ip, uint32_t dst_ip);
  void report_end(uint32_t flow_id);
  // Sends what is pending and applies the RATE_UPDATEs that arrived.
  void poll(uint64_t now_ns);

  const FlowtuneConfig& cfg;
  FlowletTable flowlets;
  FlowPacer pacer;
  PacedQueues held;
  uint64_t next_poll_ns = 0;

  RelaxedCounter datagrams_sent;
  RelaxedCounter send_errors;  // datagrams the kernel refused (lost news, counted)
  RelaxedCounter starts_sent;
  RelaxedCounter ends_sent;
  RelaxedCounter datagrams_received;
  RelaxedCounter rate_updates;         // entries applied (stale ones are pacer.stale)
  RelaxedCounter unexpected_messages;  // well formed, but not a RATE_UPDATE
  RelaxedCounter malformed[kFlowtuneParseResultCount];
  RelaxedCounter flushed;  // held packets sent at once: flowlet ended or lease ran out

 private:
  void send(const uint8_t* p, uint32_t len);
  void receive(uint64_t now_ns);

  FlowtuneOutbox outbox_;
  int fd_ = -1;
  alignas(8) uint8_t rx_[2048];
};

}  // namespace sluice
