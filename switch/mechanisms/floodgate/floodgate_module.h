#pragma once
// Floodgate in the path (SPEC 4.1; docs/mechanisms/floodgate.md, "In the
// data path"; the rules are lib/mechanisms/floodgate): the window / VOQ
// gate of admission toward switches, credit and counts at departure, the
// frames it receives (credit, sync) and sends (credit, dstPause, sync), and
// its timers.
//
// One writer: a switch's FloodgateSwitch (windows, VOQs, dstPause, sync) is
// touched only on the lcore that owns its switch-facing ports, which is
// where packets toward them are admitted and depart and where credit and
// sync frames arrive. Credit is earned wherever a packet departs; each lcore
// aggregates its own and sends the frame out of the ingress port, through
// that port's owner when it is another lcore.

#include <rte_mbuf.h>

#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "lib/common/relaxed_counter.h"
#include "lib/control/control_frame.h"
#include "lib/mechanisms/floodgate/credit_aggregator.h"
#include "lib/mechanisms/floodgate/floodgate_switch.h"
#include "lib/net/packet_parser.h"
#include "switch/ops/module_reports.h"
#include "switch/path/mbuf_meta.h"
#include "switch/path/stage_plan.h"
#include "switch/runtime/runtime.h"

namespace sluice {

class Worker;
class FabricLoop;

// Names of the Floodgate frame types, in the order of FgFrames' arrays.
inline constexpr const char* kFgFrameTypes[3] = {"credit", "dst_pause", "sync"};

constexpr uint32_t kNoFgIndex = UINT32_MAX;

// A Floodgate switch's state. `state` is written only by the lcore that
// owns the switch's switch-facing ports (owner_slot); the tables are fixed
// once built.
struct FgSwitch {
  std::unique_ptr<FloodgateSwitch> state;
  unsigned owner_slot = 0;
  // Per global port: its dense index among the switch's switch-facing ports
  // (credit ingress, sync) and among its host ports (dstPause), or kNoFgIndex.
  std::vector<uint32_t> switch_index;
  std::vector<uint32_t> host_index;
  std::vector<uint16_t> switch_ports;  // dense switch-facing index -> global port
  std::vector<uint16_t> host_ports;    // dense host index -> global port
  uint64_t sync_interval_ns = 0;       // 0: no loss recovery
  uint64_t next_sync_ns = 0;           // owner lcore
  // Per lcore slot (nullptr where it owns none of the switch's ports): the
  // credit its departures earned, per switch-facing ingress of the switch,
  // until it leaves in FG_CREDIT frames.
  std::vector<std::unique_ptr<CreditAggregator>> credits;
};

// A port of a Floodgate switch: the window a new destination starts with
// when its packets leave here (switch-facing ports).
struct FgPort {
  uint32_t initial_window = 0;
};

// One lcore's counts of a port's Floodgate frames (that lcore writes them):
// by type (kFgFrameTypes order), the credit bytes credit frames carried,
// the wire bytes of those sent (overhead), and credit lost.
struct FgFrames {
  RelaxedCounter sent[3];
  RelaxedCounter received[3];
  RelaxedCounter credit_sent_bytes;
  RelaxedCounter credit_received_bytes;
  // Credit this switch owed the port's upstream and could not keep: the
  // port's pending list was full of destinations it could not send.
  RelaxedCounter credit_lost_bytes;
  RelaxedCounter control_tx_bytes;
};

struct FloodgateModuleState : ModuleState {
  std::vector<std::unique_ptr<FgSwitch>> switches;  // per switch (nullptr: off)
  std::unique_ptr<FgPort[]> ports;                  // per global port
  std::vector<std::vector<FgFrames>> frames;        // [lcore slot][global port]
};

class FloodgateModule {
 public:
  static constexpr unsigned kId = 2;
  // The forward step writes its packet's destination and size, and adds
  // the size to the sync receiver's count of data from that upstream,
  // which only an FG_SYNC's step reads (module.h).
  static constexpr bool kForwardInBurst = true;
  // Where its depart step is its only step at a port (a host port: no
  // window), that step adds the packet's credit for its ingress, the same
  // whether the packet leaves at its pass or dequeued at that instant.
  static constexpr bool kStepsAtPass = true;
  static std::string build(Runtime& rt);
  // The window applies toward switch-facing ports only; credit is earned
  // wherever a packet from a switch-facing port leaves, host ports included.
  static void plan(const SwitchConfig& sw, const PortConfig& egress, StagePlan& p) {
    if (!sw.floodgate.enabled) return;
    if (egress.role == PortRole::kSwitch) p.add(Step::kGate, kId);
    p.add(Step::kDepart, kId);
    p.add(Step::kDropped, kId);
  }
  static FgSwitch* of(const SwitchRuntime& sw) { return static_cast<FgSwitch*>(sw.module[kId]); }
  static FgPort* at(const PortRuntime& p) { return static_cast<FgPort*>(p.module[kId]); }
  static bool takes_control(ControlType t) {
    return t == ControlType::kFgCredit || t == ControlType::kFgDstPause ||
           t == ControlType::kFgSync;
  }

  explicit FloodgateModule(Worker& w);

  bool forward(PortRuntime& in, rte_mbuf* m, const ParsedPacket& pp, uint64_t now);
  // The forward step for a routed stretch of a burst (forward_burst):
  // forward's for each packet routed (outs[i] != nullptr), in order.
  void forward_run(PortRuntime& in, rte_mbuf* const* pkts, const ParsedPacket* pps,
                   PortRuntime* const* outs, unsigned n, uint64_t now);
  bool gate(PortRuntime& out, rte_mbuf* m, const MbufMeta& meta, uint64_t now);
  void depart(PortRuntime& port, const TmPacket& p, uint64_t now);
  // The depart step for n data packets leaving `port` at one instant, in
  // order: depart's for each (module.h).
  void depart_run(PortRuntime& port, const TmPacket* pkts, unsigned n, uint64_t now);
  void dropped(PortRuntime& out, rte_mbuf* m, bool gated, uint64_t now);
  void control(PortRuntime& in, rte_mbuf* m, const ControlMessage& msg, uint64_t now);
  void control_passing(PortRuntime& port, const rte_mbuf* m, uint64_t now);
  // Every pass: credit frames that are due, and on the owner the VOQs a
  // refund opened and the sync interval (inline: most lcores earn credit
  // for no switch).
  bool timers(uint64_t now) {
    bool busy = false;
    for (uint16_t s : switches_) busy |= timers_of(s, now);
    return busy;
  }
  void elements(FabricLoop& loop);
  // One switch's timers, and when they are next due (exact time).
  bool timers_of(uint16_t sw, uint64_t now);
  uint64_t due_of(uint16_t sw, uint64_t now);

  // At stop: every packet a VOQ holds, with its egress port, to f (freed
  // by f).
  static void drain_held(Runtime& rt, const std::function<void(uint16_t, rte_mbuf*)>& f);
  static void collect(const Runtime& rt, MetricFamilies& out);
  static void summary_port(const Runtime& rt, uint16_t port, JsonFields& f);
  static void summary_switch(const Runtime& rt, const SwitchRuntime& sw, JsonFields& f);
  static void telemetry_port(const Runtime& rt, const PortRuntime& p, rte_tel_data* d);

 private:
  void left(FgSwitch& fg, const MbufExtra& x, uint64_t now);
  void take_credit(FgSwitch& fg, uint32_t ingress, const ControlMessage& msg);
  void take_sync(FgSwitch& fg, uint16_t sw, uint32_t ingress, const ControlMessage& msg,
                 uint64_t now);
  [[gnu::noinline]] void earn_credit(uint16_t sw, uint32_t ingress, uint32_t dst, uint64_t bytes,
                                     uint64_t now);
  void send_credit(uint16_t sw, uint32_t ingress, uint64_t now);
  void send_dst_pause(const FgSwitch& fg, uint32_t host, uint32_t dst, bool pause, uint64_t now);
  void send_sync(FgSwitch& fg, uint64_t now);
  void drain(FgSwitch& fg, uint64_t now);
  void count_credit_sent(PortRuntime& port, const rte_mbuf* m, uint64_t now);
  rte_mbuf* credit_frame(PortRuntime& port, const CreditEntry* entries, uint32_t n);
  // Exact time: the switch's timers may be due sooner (a no-op in real time).
  void touch_timers(uint16_t sw) {
    if (exact_) [[unlikely]]
      touch_element(sw);
  }
  void touch_element(uint16_t sw);

  Worker& w_;
  FloodgateModuleState* s_ = nullptr;
  std::vector<FgFrames>* frames_ = nullptr;  // this lcore's
  std::vector<uint16_t> switches_;           // Floodgate switches this lcore earns credit for
  // Per switch: a window this lcore writes rose outside credit intake.
  std::vector<uint8_t> drain_due_;
  std::vector<uint32_t> element_;  // per switch: its timers' calendar element (exact time)
  // Per switch: its state, and this lcore's credit aggregator (nullptr
  // where none), looked up once.
  std::vector<FgSwitch*> switch_;
  std::vector<CreditAggregator*> credits_;
  bool exact_ = false;
};

}  // namespace sluice
