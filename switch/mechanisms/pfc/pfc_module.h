#pragma once
// PFC (IEEE 802.1Qbb) and 802.3x PAUSE in the path (docs/mechanisms/pfc.md;
// the rules are lib/mechanisms/pfc): bytes that arrived on an ingress and
// still sit in the switch are counted per priority from admission (or a
// gate's hold) until they leave; above XOFF the ingress's peer is paused,
// and a PFC or PAUSE frame received pauses this port's classes.

#include <rte_mbuf.h>

#include <memory>
#include <string>
#include <vector>

#include "lib/mechanisms/pfc/pfc_ingress.h"
#include "lib/mechanisms/pfc/pfc_reaction.h"
#include "lib/net/packet_parser.h"
#include "switch/ops/module_reports.h"
#include "switch/path/mbuf_meta.h"
#include "switch/path/stage_plan.h"
#include "switch/runtime/runtime.h"

namespace sluice {

class Worker;

// One port that takes part in its switch's PFC or PAUSE.
struct PfcPort {
  std::unique_ptr<PfcIngress> ingress;    // what arrives here may pause the peer
  std::unique_ptr<PfcReaction> reaction;  // what the peer sends pauses this port
  // Exact time: a frame that could not be queued (no mbuf, control queue
  // full) is asked again no sooner than this (owner lcore).
  uint64_t retry_ns = 0;
  // Counted with its reserve and headroom (either set): PfcIngressBytes'
  // second form.
  bool pooled = false;
};

struct PfcModuleState : ModuleState {
  std::vector<std::unique_ptr<PfcPort>> ports;  // per global port (nullptr: not taking part)
  // Bytes in each lcore's queues by (ingress port, priority): the ingress
  // port's owner sums these shards over lcores. [lcore slot][global port].
  std::vector<std::vector<PfcIngressBytes>> bytes;
  // Per switch, what its PFC ports set aside from the buffer (headroom and
  // reserve, once per port); and per [lcore slot][switch] what its
  // ingresses hold within reserves and in headroom.
  std::vector<uint64_t> set_aside;
  std::vector<std::vector<PfcPoolUse>> pool;
};

class PfcModule {
 public:
  static constexpr unsigned kId = 0;
  static std::string build(Runtime& rt);
  // PFC and PAUSE count on every port of their switch and release at
  // departure.
  static void plan(const SwitchConfig& sw, const PortConfig&, StagePlan& p) {
    if (sw.pfc.mode == PfcGenerationMode::kOff) return;
    p.add(Step::kAccount, kId);
    p.add(Step::kRelease, kId);
  }
  static PfcPort* at(const PortRuntime& p) { return static_cast<PfcPort*>(p.module[kId]); }

  explicit PfcModule(Worker& w);

  // Admission: the ingress it counts against (TmPacket::aux = ingress + 1
  // until it leaves), then its bytes under its class's priority.
  void before_enqueue(PortRuntime& out, rte_mbuf* m, TmPacket& tp);
  void account(PortRuntime& out, rte_mbuf* m, const MbufMeta& meta, const TmPacket& tp,
               uint64_t now);
  // A gate's hold counts like a queue; its release lets go.
  void hold(PortRuntime& out, rte_mbuf* m, const MbufMeta& meta);
  void unhold(PortRuntime& out, rte_mbuf* m);
  void release(PortRuntime& port, const TmPacket& p, uint64_t now);
  // Ingress control: a PFC or PAUSE frame from the peer (false: not ours).
  bool mac_control(PortRuntime& in, rte_mbuf* m, const ParsedPacket& pp, uint64_t now);
  // Real time: the XOFF / XON / refresh owed after each transmit; the
  // paused time settled for the scraper. (Inline: every pass asks it of
  // every port, most of which take no part.)
  void after_transmit(PortRuntime& port, uint64_t now) {
    if (at(port) != nullptr) generate(port, now);
  }
  void slow_timers(PortRuntime& port, uint64_t now);
  void finish_port(PortRuntime& port, uint64_t end_ns);
  // Exact time: the port's timers' part, and the ports whose dynamic XOFF
  // follows the free buffer that a port's packets just changed.
  uint64_t port_timers_due(const PortRuntime& port, uint64_t now) const;
  void port_timers(PortRuntime& port, uint64_t now);
  // Inline: asked for every frame a port moves, and a no-op on a fabric
  // without pfc.dynamic.
  void port_moved(const PortRuntime& port) {
    if (any_dynamic_) touch_dynamic(port.switch_index);
  }
  void admitted_at(const PortRuntime& out) {
    if (any_dynamic_) touch_dynamic(out.switch_index);
  }

  static void collect(const Runtime& rt, MetricFamilies& out);
  static void summary_port(const Runtime& rt, uint16_t port, JsonFields& f);

 private:
  bool decision(const PortRuntime& port, uint64_t now, PfcDecision* d) const;
  uint64_t free_pool(uint16_t sw) const;
  void generate(PortRuntime& port, uint64_t now);
  void count(PortRuntime& out, rte_mbuf* m, uint16_t ingress, uint16_t class_queue, uint32_t bytes);
  void uncount(uint16_t ingress, uint16_t sw, uint8_t prio, uint32_t bytes);
  void touch_dynamic(uint16_t sw);

  Worker& w_;
  PfcModuleState* s_ = nullptr;  // nullptr: no switch runs PFC
  std::vector<PfcIngressBytes>* bytes_ = nullptr;  // this lcore's shard
  std::vector<PfcPoolUse>* pool_ = nullptr;        // this lcore's, per switch
  // Per switch: this lcore's ports whose XOFF threshold follows the free
  // buffer (pfc.dynamic).
  std::vector<std::vector<uint16_t>> dynamic_;
  bool any_dynamic_ = false;
};

}  // namespace sluice
