#pragma once
// Flowtune at one edge switch, on one worker lcore (docs/mechanisms/flowtune.md,
// "Edge switches"): the flowlet table and pacer of the flows that enter by
// the host ports this lcore owns, the packets the pacer holds, and the way
// to the allocator. That way is one of two, and only here does the edge
// tell them apart: in real time sluice-allocator over UDP
// (flowtune_udp_path.h); in exact fabric time the allocator inside the
// fabric (lib/mechanisms/flowtune/fabric_allocator.h), which delivers rates itself
// through apply_rate().

#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include "lib/common/relaxed_counter.h"
#include "lib/config/config.h"
#include "lib/mechanisms/flowtune/fabric_allocator.h"
#include "lib/mechanisms/flowtune/flow_pacer.h"
#include "lib/mechanisms/flowtune/flowlet_table.h"
#include "lib/mechanisms/flowtune/paced_queues.h"
#include "switch/mechanisms/flowtune/flowtune_udp_path.h"

namespace sluice {

class FlowtuneEdge {
 public:
  // How often the real-time worker ends idle flowlets (exact time ends each
  // when its gap runs out: FlowletTable::next_end_ns).
  static constexpr uint64_t kExpireEveryNs = 20'000;

  explicit FlowtuneEdge(const FlowtuneConfig& cfg);
  FlowtuneEdge(const FlowtuneEdge&) = delete;
  FlowtuneEdge& operator=(const FlowtuneEdge&) = delete;

  // Real time: sluice-allocator over UDP (`name` makes the rings unique);
  // false with *error.
  bool open_udp(const std::string& name, std::string* error);
  // Exact time: the allocator in the fabric, which knows this edge as
  // `number`.
  void attach_fabric(flowtune::FabricAllocator* allocator, uint32_t number);
  FlowtuneUdpPath* udp() { return udp_.get(); }
  const FlowtuneUdpPath* udp() const { return udp_.get(); }

  // Worker lcore: news for the allocator, sent at now (lost, and counted,
  // if the way is full: the flow then stays unpaced, the safe side).
  // `via`: the fabric links the flow crosses, for the allocator in the
  // fabric with full paths (empty otherwise).
  void report_start(uint32_t flow_id, uint32_t src_ip, uint32_t dst_ip, uint64_t now_ns,
                    std::span<const flowtune::LinkId> via = {});
  void report_end(uint32_t flow_id, uint64_t now_ns);
  // A rate reached the edge: the pacer holds the flow to it for a lease.
  void apply_rate(uint32_t flow_id, uint32_t kbps, uint64_t now_ns);
  // Real time: the rates that came over the UDP path.
  void apply_rates(uint64_t now_ns);

  // pace_at: host: whose flowlet a slot holds, so that a rate reaches the
  // transport host that sends it (the flowlet's id, the port the host is
  // behind, the host's own flow id).
  struct HostFlow {
    uint32_t flowlet = 0;
    uint16_t port = 0;
    uint32_t flow = 0;
  };

  const FlowtuneConfig& cfg;
  FlowletTable flowlets;
  FlowPacer pacer;
  PacedQueues held;
  std::vector<HostFlow> host_flows;  // by flowlet slot (pace_at: host only)
  uint64_t next_expire_ns = 0;
  uint32_t element = 0;  // exact time: the worker's calendar element for its timers

  // Worker-written.
  RelaxedCounter starts_reported;
  RelaxedCounter ends_reported;
  RelaxedCounter events_lost;   // the way to the allocator was full
  RelaxedCounter rate_updates;  // entries applied (stale ones are pacer.stale)
  RelaxedCounter flushed;       // held packets sent at once: lease ran out
  // Exact time: the FLOWLET_* datagrams this edge's news would fill, as
  // the UDP path's outbox batches them (what one instant reports).
  RelaxedCounter messages_sent;

 private:
  void count_message(bool start, uint64_t now_ns);

  std::unique_ptr<FlowtuneUdpPath> udp_;
  flowtune::FabricAllocator* fabric_ = nullptr;
  uint32_t number_ = 0;
  uint64_t batch_ns_ = UINT64_MAX;  // the instant the counted batch is of
  uint32_t batch_starts_ = 0, batch_ends_ = 0;
};

}  // namespace sluice
