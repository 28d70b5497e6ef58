#pragma once
// BFC, Backpressure Flow Control, in the path (SPEC 4.2; docs/mechanisms/
// bfc.md, "In the data path"; the rules are lib/mechanisms/bfc): at
// admission its flow table chooses the data queue (QueueChoice) and, above
// Th, flags the packet and may pause the upstream queue that fed it; at
// departure the entry lets the packet go and a flagged packet's leaving may
// resume that queue; BFC frames from the downstream pause this port's
// queues; every bitmap interval the paused set is sent again, so a lost
// pause or resume heals. Per switch, one shard per worker lcore that owns
// some of its ports.

#include <rte_mbuf.h>

#include <memory>
#include <string>
#include <vector>

#include "lib/common/relaxed_counter.h"
#include "lib/control/control_frame.h"
#include "lib/mechanisms/bfc/bfc_shard.h"
#include "lib/mechanisms/bfc/bitmap_schedule.h"
#include "lib/mechanisms/bfc/upstream_pause_state.h"
#include "switch/ops/module_reports.h"
#include "switch/path/mbuf_meta.h"
#include "switch/path/stage_plan.h"
#include "switch/runtime/runtime.h"

namespace sluice {

class Worker;
class FabricLoop;

// Names of the BFC frame types, in the order of BfcFrames' arrays.
inline constexpr const char* kBfcFrameTypes[3] = {"pause", "resume", "bitmap"};

// A port of a BFC switch.
struct BfcPort {
  BfcShard* shard = nullptr;  // the owner lcore's shard, which assigns this port's queues
  bool peer = false;          // switch-facing: data leaves with the shim, BFC frames accepted
  bool nic = false;           // host port whose NIC names its queue in the shim (nic: bfc)
  // A switch-facing port's queues as its downstream pauses them.
  std::unique_ptr<UpstreamPauseState> upstream;
  RelaxedCounter peak_queue_bytes;   // deepest data queue seen at an enqueue
  RelaxedCounter peak_excess_bytes;  // deepest queue minus the Th it was judged by
};

// BFC frames by type (kBfcFrameTypes order) sent out of, and received on,
// a port: one per lcore and port (that lcore writes it).
struct BfcFrames {
  RelaxedCounter sent[3];
  RelaxedCounter received[3];
};

// A BFC switch: per lcore slot, its shard and when the shard's paused sets
// are sent again (nullptr where the lcore owns none of its ports).
struct BfcSwitch {
  std::vector<std::unique_ptr<BfcShard>> shards;
  std::vector<std::unique_ptr<BitmapSchedule>> bitmaps;
  uint64_t hop_rtt_ns = 0;  // HRTT (lib/mechanisms/bfc/hop_rtt.h)
};

struct BfcModuleState : ModuleState {
  std::vector<std::unique_ptr<BfcSwitch>> switches;  // per switch (nullptr: off)
  std::unique_ptr<BfcPort[]> ports;                  // per global port
  std::vector<std::vector<BfcFrames>> frames;        // [lcore slot][global port]
};

class BfcModule {
 public:
  static constexpr unsigned kId = 1;
  // A packet may cut through an idle port (real time): QueueChoice::passed.
  static constexpr bool kChoiceAtPass = true;
  static std::string build(Runtime& rt);
  // BFC chooses queues and departs on every port of its switch; the upstream
  // queue travels in the shim toward switches only.
  static void plan(const SwitchConfig& sw, const PortConfig& egress, StagePlan& p) {
    if (!sw.bfc.enabled) return;
    p.queue_choice = kId;
    p.add(Step::kDepart, kId);
    if (egress.role == PortRole::kSwitch) p.data_shim = true;
  }
  static BfcPort* at(const PortRuntime& p) { return static_cast<BfcPort*>(p.module[kId]); }
  static BfcSwitch* of(const SwitchRuntime& sw) {
    return static_cast<BfcSwitch*>(sw.module[kId]);
  }
  static bool takes_control(ControlType t) {
    return t == ControlType::kBfcPause || t == ControlType::kBfcResume ||
           t == ControlType::kBfcBitmap;
  }

  explicit BfcModule(Worker& w);

  // Admission step 2: the flow table's queue. Decides only: a packet
  // dropped by buffer admission leaves the shard as it was; once the
  // traffic manager took it, the entry takes the packet and above Th it is
  // flagged and may pause its upstream queue.
  struct QueueChoice {
    MbufExtra* x = nullptr;
    BfcTicket ticket;
    uint64_t depth = 0;  // the chosen queue's bytes before the packet

    uint16_t choose(Worker&, PortRuntime& out, rte_mbuf* m, const MbufMeta&, uint64_t now) {
      x = mbuf_extra(m);
      const uint16_t q = at(out)->shard->assign(out.index, x->bfc.flow_hash, now, &ticket);
      depth = out.tm->queue_bytes(q);
      return q;
    }
    void on_enqueued(Worker& w, PortRuntime& out, uint16_t q, uint32_t bytes, uint64_t now) {
      // What pause counting needs (a pass needs neither). forward() stored
      // these two fields with two 16-bit stores; one 32-bit load of both
      // cannot be forwarded from them and waits until both reach the
      // cache, so load them separately.
      ticket.ingress = load_u16(&x->ingress);
      ticket.upstream_queue = load_u16(&x->upstream_queue);
      BfcPort& b = *at(out);
      const BfcSignal s = b.shard->on_enqueued(out.index, q, depth, paused(b), now, &ticket);
      x->bfc.entry = ticket.entry;
      x->bfc_flagged = ticket.flagged;
      raise_peaks(b, depth + bytes, b.shard->last_threshold(out.index));
      if (s == BfcSignal::kPause)
        send(w, ticket.ingress, ControlType::kBfcPause, ticket.upstream_queue, now);
    }
    // Real time's cut-through: the traffic manager passed the packet from
    // empty queue q straight to the port's next burst. on_enqueued() and
    // depart() at once (BfcShard::on_passed); the mbuf keeps no ticket.
    void passed(Worker&, PortRuntime& out, uint16_t q, uint32_t bytes, uint64_t now) {
      BfcPort& b = *at(out);
      raise_peaks(b, depth + bytes, b.shard->on_passed(out.index, q, paused(b), now, ticket));
    }
    // The port's queues its downstream pauses (none on a host port).
    static uint64_t paused(const BfcPort& b) { return b.upstream ? b.upstream->paused_mask() : 0; }
    // The queue held `after` bytes with the packet, judged by Th `th`.
    static void raise_peaks(BfcPort& b, uint64_t after, uint64_t th) {
      raise_to(b.peak_queue_bytes, after);
      if (after > th) raise_to(b.peak_excess_bytes, after - th);
    }
    // A 16-bit load the compiler may not merge with its neighbour's.
    static uint16_t load_u16(const uint16_t* p) { return __atomic_load_n(p, __ATOMIC_RELAXED); }
    static void raise_to(RelaxedCounter& peak, uint64_t v) {
      if (v > peak.get()) peak.set(v);
    }
  };

  void depart(PortRuntime& port, const TmPacket& p, uint64_t now);
  void control(PortRuntime& in, rte_mbuf* m, const ControlMessage& msg, uint64_t now);
  // Real time: the bitmaps due (inline: every pass asks, of most lcores
  // for no BFC switch); exact time: one element per switch.
  bool timers(uint64_t now) {
    if (s_ != nullptr) send_bitmaps(now);
    return false;
  }
  void elements(FabricLoop& loop);
  void send_bitmaps(uint64_t now);  // timers' work: every switch's
  void send_bitmaps_of(uint16_t sw, uint64_t now);
  BitmapSchedule* bitmaps_of(uint16_t sw) const;

  // BFC_PAUSE or BFC_RESUME of upstream queue `queue`, out of port `port`
  // (across lcores through send_from() when it belongs to another one).
  static void send(Worker& w, uint16_t port, ControlType type, uint16_t queue, uint64_t now);

  // The queue trace's column: the port's Th as of its last enqueue.
  static uint64_t threshold(const PortRuntime& port);
  static void collect(const Runtime& rt, MetricFamilies& out);
  static void summary_port(const Runtime& rt, uint16_t port, JsonFields& f);
  static void summary_switch(const Runtime& rt, const SwitchRuntime& sw, JsonFields& f);
  static void telemetry_port(const Runtime& rt, const PortRuntime& p, rte_tel_data* d);

 private:
  Worker& w_;
  BfcModuleState* s_ = nullptr;
  std::vector<BfcFrames>* frames_ = nullptr;  // this lcore's
};

}  // namespace sluice
