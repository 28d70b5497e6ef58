#pragma once
// Flowtune at one edge switch, on one worker lcore (docs/mechanisms/flowtune.md,
// "Edge switches"): the flowlet table and pacer of the flows that enter by
// the host ports this lcore owns, the packets the pacer holds, and the
// allocator's UDP socket.
//
// The worker lcore never makes a system call for Flowtune (a syscall is
// where the kernel may preempt it): it puts FLOWLET_START / FLOWLET_END
// events on a ring and takes RATE_UPDATE entries off another, and the
// FlowtuneControl thread (on the main lcore's CPU) moves them between the
// rings and the socket. Each edge has its own socket, so the allocator tells
// the lcores' flow ids apart by the sending port.

#include <rte_ring.h>

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
  // How often the worker ends idle flowlets.
  static constexpr uint64_t kExpireEveryNs = 20'000;
  static constexpr unsigned kRingSize = 8192;

  explicit FlowtuneEdge(const FlowtuneConfig& cfg);
  ~FlowtuneEdge();
  FlowtuneEdge(const FlowtuneEdge&) = delete;
  FlowtuneEdge& operator=(const FlowtuneEdge&) = delete;

  // Creates the rings (`name` makes them unique) and the socket, connected
  // to the allocator; false with *error.
  bool open(const std::string& name, std::string* error);
  // Frees the rings (before EAL's cleanup; the destructor closes the socket).
  void release_rings();

  // Worker lcore: news for the allocator (lost, and counted, if the ring is
  // full: the flow then stays unpaced, the safe side), and the rates that
  // arrived, applied to the pacer.
  void report_start(uint32_t flow_id, uint32_t src_ip, uint32_t dst_ip);
  void report_end(uint32_t flow_id);
  void apply_rates(uint64_t now_ns);

  // Control thread: sends what the worker reported, receives datagrams and
  // queues their RATE_UPDATE entries for the worker. Returns whether it
  // moved anything. fd() is for its poll().
  bool serve();
  int fd() const { return fd_; }

  const FlowtuneConfig& cfg;
  FlowletTable flowlets;
  FlowPacer pacer;
  PacedQueues held;
  uint64_t next_expire_ns = 0;

  // Worker-written.
  RelaxedCounter starts_reported;
  RelaxedCounter ends_reported;
  RelaxedCounter events_lost;   // the ring to the control thread was full
  RelaxedCounter rate_updates;  // entries applied (stale ones are pacer.stale)
  RelaxedCounter flushed;       // held packets sent at once: lease ran out
  // Control-thread-written.
  RelaxedCounter datagrams_sent;
  RelaxedCounter send_errors;  // datagrams the kernel refused (lost news, counted)
  RelaxedCounter datagrams_received;
  RelaxedCounter rates_lost;           // the ring to the worker was full
  RelaxedCounter unexpected_messages;  // well formed, but not a RATE_UPDATE
  RelaxedCounter malformed[kFlowtuneParseResultCount];

 private:
  // One ring element: an event for the allocator or a rate for the worker.
  struct Event {
    uint32_t flow_id;
    uint32_t a;  // START: src IPv4; rate: kbit/s
    uint32_t b;  // START: dst IPv4
    uint32_t kind;
  };
  static constexpr uint32_t kStart = 1, kEnd = 2;
  void send(const uint8_t* p, uint32_t len);
  bool receive();
  void enqueue(rte_ring* r, Event e, RelaxedCounter& lost);

  rte_ring* to_control_ = nullptr;  // worker -> control thread
  rte_ring* to_worker_ = nullptr;   // control thread -> worker
  FlowtuneOutbox outbox_;           // control thread
  int fd_ = -1;
  alignas(8) uint8_t rx_[2048];
};

}  // namespace sluice
