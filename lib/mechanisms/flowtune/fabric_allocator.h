#pragma once
// Flowtune's allocator inside the fabric, on exact fabric time (SPEC §4.5,
// §4.9; docs/mechanisms/flowtune.md, "The allocator in the fabric"): the
// same core as sluice-allocator (allocator_core.h) between two control
// paths with a fixed one-way delay. An edge's FLOWLET_START / FLOWLET_END
// reach the core control_delay after the edge sent it; the core iterates
// every iteration period while flows are live and re-sends rates before
// their lease runs out; a rate reaches its edge control_delay after the
// pass that produced it.
//
// Edges are numbered 0..edges-1 (each is a sender of the core, under its
// own number). What one pass sends one edge counts as RATE_UPDATE messages
// of at most 183 entries, as sluice-allocator batches its datagrams, so that
// update traffic is measured the same way in both (bytes include the
// 28-byte IPv4 and UDP headers, as sluice-allocator's do).
//
// Time is an argument: the caller runs run() at next_due_ns(). Fixed
// tables; nothing allocates after construction. Single writer.

#include <array>
#include <cstdint>
#include <span>
#include <vector>

#include "lib/common/relaxed_counter.h"
#include "lib/mechanisms/flowtune/allocator_core.h"
#include "lib/mechanisms/flowtune/control_path.h"
#include "lib/mechanisms/flowtune/flowtune_wire.h"

namespace sluice::flowtune {

struct FabricAllocatorConfig {
  AllocatorConfig core;
  uint64_t control_delay_ns = 8'500;
  uint32_t edges = 1;
  uint32_t news_in_flight = 65536;   // FLOWLET_* entries the path to the core holds
  uint32_t rates_in_flight = 65536;  // rates the path to the edges holds
};

struct FabricAllocatorCounters {
  AllocatorCounters core;
  RelaxedCounter news_lost;        // FLOWLET_* entries beyond news_in_flight
  RelaxedCounter rates_lost;       // rates beyond rates_in_flight
  RelaxedCounter rates_delivered;  // rates that reached their edge
  RelaxedCounter update_messages;  // RATE_UPDATE messages the rates would fill
  RelaxedCounter update_bytes;     // and their bytes with IPv4 and UDP headers
};

class FabricAllocator {
 public:
  static constexpr uint64_t kNever = UINT64_MAX;

  explicit FabricAllocator(const FabricAllocatorConfig& cfg);

  // Fabric links between the host links a flow may cross.
  static constexpr uint32_t kMaxVia = kMaxPathLinks - 2;

  // A link between switches (capacity in host-rate units) for the
  // full-path model, before any news; kInvalidLink when the table is full.
  LinkId add_fabric_link(double capacity) { return core_.add_fabric_link(capacity); }

  // News an edge sent at now. False: lost (counted), the path was full.
  // `via`: the fabric links the flow crosses (AllocatorCore::flowlet_start;
  // more than kMaxVia: the flow is refused there).
  bool send_start(uint32_t edge, const FlowletStart& s, uint64_t now_ns,
                  std::span<const LinkId> via = {});
  bool send_end(uint32_t edge, uint32_t flow_id, uint64_t now_ns);

  // When run() next has something to do: news or a rate arriving, an
  // iteration or a lease pass (possibly past: then at once); kNever when
  // nothing is in flight and no flow is live.
  uint64_t next_due_ns() const;

  // Everything due at now, in this order: news that has arrived reaches the
  // core; the core iterates and re-sends leases if due, its rates leaving
  // now; every rate that has arrived reaches its edge as deliver(edge,
  // flow_id, rate_kbps) (with no delay, those of this pass too).
  template <class Deliver>
  void run(uint64_t now_ns, Deliver&& deliver);

  const AllocatorCore& core() const { return core_; }
  const FabricAllocatorCounters& counters() const { return counters_; }
  uint64_t control_delay_ns() const { return to_core_.delay_ns(); }
  uint32_t news_in_flight() const { return to_core_.in_flight(); }
  uint32_t rates_in_flight() const { return to_edges_.in_flight(); }

 private:
  struct News {
    uint32_t edge = 0;
    bool start = false;
    uint8_t via_size = 0;  // kMaxVia + 1: too long a path
    FlowletStart entry{};  // an END uses flow_id only
    std::array<LinkId, kMaxVia> via{};
  };
  struct Rate {
    uint32_t edge = 0;
    uint32_t flow_id = 0;
    uint32_t kbps = 0;
  };
  void take(const News& n);
  void send_rates(std::span<const AllocatorUpdate> updates, uint64_t now_ns);
  void count_messages();

  FabricAllocatorCounters counters_;
  AllocatorCore core_;
  ControlPath<News> to_core_;
  ControlPath<Rate> to_edges_;
  uint32_t per_msg_;
  std::vector<uint32_t> pass_entries_;  // per edge: rates sent this pass
  std::vector<uint32_t> pass_edges_;    // edges with rates this pass
};

template <class Deliver>
void FabricAllocator::run(uint64_t now_ns, Deliver&& deliver) {
  to_core_.receive(now_ns, [this](const News& n) { take(n); });
  if (core_.iteration_due(now_ns)) send_rates(core_.iterate(now_ns).updates, now_ns);
  if (core_.lease_due(now_ns)) send_rates(core_.lease_pass(now_ns), now_ns);
  count_messages();
  to_edges_.receive(now_ns, [&](const Rate& r) {
    counters_.rates_delivered.add();
    deliver(r.edge, r.flow_id, r.kbps);
  });
}

}  // namespace sluice::flowtune
