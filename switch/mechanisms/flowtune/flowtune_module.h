#pragma once
// Flowtune at an edge switch (SPEC 4.5; docs/mechanisms/flowtune.md, "Edge
// switches"; the rules are lib/mechanisms/flowtune): a packet a host sends
// in is forwarded, then, before admission, counted into its flowlet and
// paced at its flow's rate; the allocator hears of flowlets starting and
// ending and answers with rates. A flow without a fresh rate goes on
// unpaced, so the allocator failing never stops traffic. The allocator is
// sluice-allocator over UDP in real time (a control thread carries the
// datagrams), and in exact fabric time an element of the fabric itself.

#include <rte_mbuf.h>

#include <memory>
#include <string>
#include <vector>

#include "lib/mechanisms/flowtune/fabric_allocator.h"
#include "lib/net/packet_parser.h"
#include "switch/mechanisms/flowtune/flowtune_control.h"
#include "switch/mechanisms/flowtune/flowtune_edge.h"
#include "switch/ops/module_reports.h"
#include "switch/path/stage_plan.h"
#include "switch/runtime/runtime.h"

namespace sluice {

class Worker;
class FabricLoop;

struct FlowtuneModuleState : ModuleState {
  // Per lcore slot, per switch: the edge of the host ports that lcore owns
  // (nullptr where none).
  std::vector<std::vector<std::unique_ptr<FlowtuneEdge>>> edges;
  std::vector<FlowtuneEdge*> numbered;  // every edge, by the allocator's number for it
  // The allocator in the fabric (exact time; written by the one worker).
  std::unique_ptr<flowtune::FabricAllocator> allocator;
  // With full paths (flowtune_allocator.paths: fabric): per global port, the
  // allocator's link for what it sends into its internal link, else
  // kInvalidLink; empty with one big switch.
  std::vector<flowtune::LinkId> port_link;
  FlowtuneControl control;  // real time: the UDP path's thread
};

class FlowtuneModule {
 public:
  static constexpr unsigned kId = 7;
  static std::string build(Runtime& rt);
  static void plan(const SwitchConfig&, const PortConfig&, StagePlan&) {}
  static FlowtuneEdge* at(const PortRuntime& p) { return static_cast<FlowtuneEdge*>(p.module[kId]); }

  explicit FlowtuneModule(Worker& w);

  // Forward, from a host port of an edge: true, the packet goes on to
  // admission now; false, the pacer holds it (it comes back when due) or
  // dropped it.
  bool forward(PortRuntime& in, rte_mbuf* m, const ParsedPacket& pp, uint64_t now);
  // Real time, before the ports are polled: rates that arrived apply; held
  // packets that are due go on to admission; idle flowlets end. (Inline:
  // every pass asks it, of most lcores for no edge.)
  bool before_poll(uint64_t now) { return !edges_.empty() && poll_edges(now); }
  // Stopping: every held packet goes on to admission.
  void finish(uint64_t end_ns);
  // Exact time: an element per edge and one for the allocator.
  void elements(FabricLoop& loop);
  void edge_timers(FlowtuneEdge& e, uint64_t now);
  uint64_t edge_due(const FlowtuneEdge& e, uint64_t now) const;
  void run_allocator(uint64_t now);
  uint64_t allocator_due(uint64_t now) const;

  // The UDP path's thread (real time), from the main lcore; its rings given
  // back at the end.
  static void start(Runtime& rt);
  static void stop(Runtime& rt);
  static void release(Runtime& rt);
  static void collect(const Runtime& rt, MetricFamilies& out);
  static void summary_switch(const Runtime& rt, const SwitchRuntime& sw, JsonFields& f);
  static void summary_top(const Runtime& rt, JsonFields& f);
  static void print_summary(const Runtime& rt);

 private:
  bool poll_edges(uint64_t now);  // before_poll's work
  void end(FlowtuneEdge& e, uint32_t flow_id, uint64_t now);
  void flush(FlowtuneEdge& e, uint32_t slot, uint64_t now);
  void release_held(FlowtuneEdge& e, const PacedQueues::Held& h, uint64_t now);
  void note_host_flow(FlowtuneEdge& e, const PortRuntime& in, const rte_mbuf* m,
                      const ParsedPacket& pp, uint32_t flowlet);
  void host_rate(FlowtuneEdge& e, uint32_t flowlet, uint32_t kbps, uint64_t now);
  void touch_edge(const FlowtuneEdge& e);
  void touch_allocator();
  uint32_t fabric_via(uint16_t sw, const ParsedPacket& pp, flowtune::LinkId* via) const;

  Worker& w_;
  FlowtuneModuleState* s_ = nullptr;
  std::vector<FlowtuneEdge*> edges_;  // the edges of the host ports this lcore owns
  uint32_t allocator_element_ = UINT32_MAX;
};

}  // namespace sluice
