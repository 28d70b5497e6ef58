#pragma once
// The way from one Flowtune edge (switch/mechanisms/flowtune/flowtune_edge.h) to sluice-allocator
// and back in real time: two rings between the worker lcore and the
// FlowtuneControl thread, and the thread's UDP socket connected to the
// allocator (docs/mechanisms/flowtune.md, "Edge switches").
//
// The worker lcore never makes a system call for Flowtune (a syscall is
// where the kernel may preempt it): it puts FLOWLET_START / FLOWLET_END
// events on a ring and takes RATE_UPDATE entries off another, and the
// control thread (on the main lcore's CPU) moves them between the rings and
// the socket. Each edge has its own socket, so the allocator tells the
// lcores' flow ids apart by the sending port.

#include <rte_ring.h>

#include <cstdint>
#include <string>

#include "lib/common/relaxed_counter.h"
#include "lib/config/config.h"
#include "lib/mechanisms/flowtune/flowtune_outbox.h"
#include "lib/mechanisms/flowtune/flowtune_wire.h"

namespace sluice {

class FlowtuneUdpPath {
 public:
  static constexpr unsigned kRingSize = 8192;

  explicit FlowtuneUdpPath(const FlowtuneConfig& cfg) : cfg_(cfg) {}
  ~FlowtuneUdpPath();
  FlowtuneUdpPath(const FlowtuneUdpPath&) = delete;
  FlowtuneUdpPath& operator=(const FlowtuneUdpPath&) = delete;

  // Creates the rings (`name` makes them unique) and the socket, connected
  // to the allocator; false with *error.
  bool open(const std::string& name, std::string* error);
  // Frees the rings (before EAL's cleanup; the destructor closes the socket).
  void release_rings();

  // Worker lcore: news for the allocator; false when the ring is full (the
  // news is lost: the flow then stays unpaced, the safe side).
  bool post_start(uint32_t flow_id, uint32_t src_ip, uint32_t dst_ip);
  bool post_end(uint32_t flow_id);
  // Worker lcore: the rates that arrived, as take(flow_id, kbps).
  template <class Take>
  void take_rates(Take&& take);

  // Control thread: sends what the worker reported, receives datagrams and
  // queues their RATE_UPDATE entries for the worker. Returns whether it
  // moved anything. fd() is for its poll().
  bool serve();
  int fd() const { return fd_; }

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

  const FlowtuneConfig& cfg_;
  rte_ring* to_control_ = nullptr;  // worker -> control thread
  rte_ring* to_worker_ = nullptr;   // control thread -> worker
  FlowtuneOutbox outbox_;           // control thread
  int fd_ = -1;
  alignas(8) uint8_t rx_[2048];
};

template <class Take>
void FlowtuneUdpPath::take_rates(Take&& take) {
  Event batch[32];
  const unsigned n = rte_ring_sc_dequeue_burst_elem(to_worker_, batch, sizeof(Event), 32, nullptr);
  for (unsigned i = 0; i < n; ++i) take(batch[i].flow_id, batch[i].a);
}

}  // namespace sluice
