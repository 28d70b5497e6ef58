#pragma once
// Flowtune's allocator without a transport or a clock (SPEC §4.5;
// docs/mechanisms/flowtune.md, "The allocator core"): the flows the edges
// reported, keyed by (sender, flow id), the hosts they name, NED over the
// one-big-switch model or, with fabric links, full paths, an iteration every `iteration_ns` while flows are
// live, the relative notification threshold, and lease re-sends. It is what
// sluice-allocator runs behind its UDP socket (allocator/) and what exact
// fabric time runs inside the fabric (fabric_allocator.h).
//
// A sender is an edge's name for replies: any 64-bit key (sluice-allocator:
// the UDP address and port a FLOWLET_START came from; the fabric: the edge's
// number). Flow ids are the sender's own, so edges need not share an id
// space. A host is an IPv4 address; its up and down links (capacity 1, in
// units of host_rate_bps) are added the first time a FLOWLET_START names it.
//
// Time is always an argument; nothing here reads a clock, sleeps or does
// I/O. Every table is sized at construction; nothing allocates afterwards.
// Single writer; the counters may be read by another thread.

#include <cstdint>
#include <span>
#include <vector>

#include "lib/common/key_index.h"
#include "lib/common/relaxed_counter.h"
#include "lib/mechanisms/flowtune/flowtune_wire.h"
#include "lib/mechanisms/flowtune/ned_allocator.h"

namespace sluice::flowtune {

struct AllocatorConfig {
  uint32_t max_hosts = 1024;   // distinct IPv4 addresses (2 links each)
  uint32_t max_fabric_links = 0;  // links between switches (add_fabric_link)
  uint32_t max_flows = 65536;  // live flows
  uint32_t max_senders = 65536;
  uint64_t host_rate_bps = 10'000'000'000ULL;  // every host link's capacity
  uint64_t iteration_ns = 10'000;              // 0: whenever asked (back to back)
  double threshold = kDefaultThreshold;        // headroom and notification threshold
  uint64_t lease_ns = 10'000'000;              // a rate unsent for lease/2 is sent again
};

// One rate for one sender's flow, as RATE_UPDATE carries it.
struct AllocatorUpdate {
  uint32_t sender;
  uint32_t flow_id;
  uint32_t rate_kbps;
};

// What the core did, for metrics and summaries. Gauges are set, counters
// added.
struct AllocatorCounters {
  RelaxedCounter starts;           // FLOWLET_START entries that added a flow
  RelaxedCounter start_duplicate;  // for a flow already live
  RelaxedCounter start_refused;    // a table (flows, hosts, senders) full
  RelaxedCounter ends;             // FLOWLET_END entries that removed a flow
  RelaxedCounter end_unknown;      // for no live flow
  RelaxedCounter iterations;
  RelaxedCounter updates;        // rates to send (threshold crossings and lease re-sends)
  RelaxedCounter lease_resends;  // of which lease re-sends
  RelaxedCounter flows;          // gauge: live flows
  RelaxedCounter hosts;          // gauge: hosts seen
  RelaxedCounter links;          // gauge: links allocated
};

enum class StartOutcome : uint8_t { kAdded, kDuplicate, kRefused };

class AllocatorCore {
 public:
  static constexpr uint32_t kNoSender = UINT32_MAX;
  static constexpr uint64_t kNever = UINT64_MAX;

  // `counters` is where the owner's metrics read; it outlives the core.
  AllocatorCore(const AllocatorConfig& cfg, AllocatorCounters& counters);

  // Names a sender before it sends (the fabric numbers its edges so):
  // its number, or kNoSender when the sender table is full.
  uint32_t add_sender(uint64_t sender_key);

  // A link between switches, capacity in units of host_rate_bps, for the
  // full-path model (paper section 6, "Path discovery"): a flow's path is
  // then its source's up link, the fabric links it crosses (`via`), and
  // its destination's down link. kInvalidLink when the table is full.
  LinkId add_fabric_link(double capacity);

  // FLOWLET_START from the sender named `sender_key`. *sender is its index
  // (senders are numbered 0, 1, ... as they first appear) or kNoSender
  // when the sender table is full. `via`: fabric links between the host
  // links (none: one big switch); refused when more than kMaxPathLinks - 2
  // or one is not a fabric link.
  StartOutcome flowlet_start(uint64_t sender_key, const FlowletStart& s, uint32_t* sender,
                             std::span<const LinkId> via = {});
  // FLOWLET_END: false when no such flow is live.
  bool flowlet_end(uint64_t sender_key, uint32_t flow_id);

  // An iteration is due while flows are live, every iteration_ns; the first
  // after an idle spell at once. Late iterations are not caught up.
  bool iteration_due(uint64_t now_ns) const {
    return alloc_.flow_count() > 0 && (cfg_.iteration_ns == 0 || now_ns >= next_iter_ns_);
  }
  struct Iteration {
    // The flows whose normalised rate moved past the threshold (valid until
    // the next call of iterate or lease_pass).
    std::span<const AllocatorUpdate> updates;
    // Whether flows were live since the previous iteration, so that
    // late_ns (now less the due time) says how stale the rates got.
    bool judged;
    uint64_t late_ns;
  };
  // One NED iteration, F-NORM, and the notices; the rates count as sent now.
  Iteration iterate(uint64_t now_ns);

  // A lease pass is due every lease/4 while flows are live: every rate last
  // sent lease/2 or more ago is sent again (the value last sent), so the
  // edge's lease never lapses while the allocator runs.
  bool lease_due(uint64_t now_ns) const {
    return alloc_.flow_count() > 0 && now_ns >= next_lease_ns_;
  }
  std::span<const AllocatorUpdate> lease_pass(uint64_t now_ns);

  // The earliest instant iteration_due or lease_due can turn true (possibly
  // already past); kNever while no flow is live.
  uint64_t next_due_ns() const;

  // A normalised rate (capacity units) as RATE_UPDATE's kbit/s.
  uint32_t to_kbps(double norm) const;

  const AllocatorConfig& config() const { return cfg_; }
  const NedAllocator& ned() const { return alloc_; }
  uint32_t flow_count() const { return alloc_.flow_count(); }
  uint32_t host_count() const { return hosts_.size(); }
  uint32_t sender_count() const { return senders_.size(); }
  const AllocatorCounters& counters() const { return counters_; }

 private:
  struct FlowMeta {
    uint32_t sender = 0;
    uint32_t flow_id = 0;
    uint64_t last_send_ns = 0;
    bool sent = false;  // last_send_ns is meaningful
    bool live = false;
  };
  static uint64_t flow_key(uint32_t sender, uint32_t flow_id) {
    return uint64_t{sender} << 32 | flow_id;
  }
  uint32_t host(uint32_t ip);  // KeyIndex::kAbsent when the host table is full
  void set_gauges();
  void emit(FlowId f, double norm, uint64_t now_ns, uint32_t n);

  AllocatorConfig cfg_;
  AllocatorCounters& counters_;
  NedAllocator alloc_;
  KeyIndex flows_;                  // flow_key(sender, flow id) -> FlowId
  KeyIndex hosts_;                  // IPv4 -> host number
  KeyIndex senders_;                // sender key -> sender number
  std::vector<LinkId> host_links_;  // up, down per host
  std::vector<bool> fabric_link_;   // by LinkId: added by add_fabric_link
  std::vector<FlowMeta> meta_;      // by FlowId
  uint32_t flow_slots_ = 0;         // FlowIds ever used: the lease pass looks at these
  std::vector<RateNotice> notices_;
  std::vector<AllocatorUpdate> out_;
  uint64_t next_iter_ns_ = 0;
  uint64_t next_lease_ns_ = 0;
  bool restart_ = true;  // no flow was live since the last iteration
};

}  // namespace sluice::flowtune
