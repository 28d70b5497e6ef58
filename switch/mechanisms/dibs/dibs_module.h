#pragma once
// DIBS in the path (SPEC 4.3; docs/mechanisms/dibs.md, "In the data path";
// the rules are lib/mechanisms/dibs):
//   - arrival: the detour count a packet brings (shim or mbuf);
//   - admission, refusal: instead of a drop, a switch-facing port that
//     admits the packet is chosen (DibsRules); on this lcore the packet is
//     enqueued there at once, otherwise it crosses the ring to the port's
//     owner, which runs the ordinary admission again (redirected);
//   - the detour is charged like any packet and marked CE if ECN-capable;
//   - departure toward a host: the packet's count into the histogram;
//   - each pass: the snapshots other lcores choose from, when the switch's
//     candidates span lcores.

#include <rte_mbuf.h>

#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "lib/mechanisms/dibs/detour_admission.h"
#include "lib/mechanisms/dibs/dibs_rules.h"
#include "lib/mechanisms/dibs/port_snapshot.h"
#include "lib/net/packet_parser.h"
#include "switch/ops/module_reports.h"
#include "switch/path/mbuf_meta.h"
#include "switch/path/stage_plan.h"
#include "switch/runtime/runtime.h"

namespace sluice {

class Worker;

// A DIBS switch's candidates for detours: its switch-facing ports, and
// what their owners publish for the other lcores when the switch's ports
// span more than one; and its rules per lcore.
struct DibsSwitch {
  std::vector<uint16_t> candidates;           // global indices of the switch-facing ports
  std::vector<uint16_t> local;                // per global port: index in SwitchRuntime::ports
  std::unique_ptr<PortSnapshot[]> snapshots;  // per candidate; written by its owner
  bool cross_lcore = false;                   // the switch's ports span lcores
  // Per lcore slot (nullptr where it owns none of the switch's ports).
  std::vector<std::unique_ptr<DibsRules>> rules;
};

// A port of a DIBS switch.
struct DibsPort {
  // An internal link from another DIBS switch, whose forward stage left
  // each packet's detour count in the mbuf (MbufExtra::detours).
  bool from_dibs_link = false;
  // Owner lcore: bytes of other lcores' detours to this port taken off the
  // ring, published with its snapshot (SnapshotClaims).
  uint64_t handed_bytes = 0;
};

struct DibsModuleState : ModuleState {
  std::vector<std::unique_ptr<DibsSwitch>> switches;  // per switch (nullptr: off)
  std::unique_ptr<DibsPort[]> ports;                  // per global port
};

class DibsModule {
 public:
  static constexpr unsigned kId = 4;
  // The exit count reads only the packet; a refusal takes the refuse step
  // whether the packet was passing or queueing (module.h).
  static constexpr bool kStepsAtPass = true;
  static constexpr bool kDepartReadsMeta = true;  // whether the packet has a count
  static std::string build(Runtime& rt);
  // DIBS detours refusals toward any egress of its switch (a host-facing
  // egress is the incast's last hop), counts exits toward hosts, and, with
  // max_detours, carries the count in the shim toward switches.
  static void plan(const SwitchConfig& sw, const PortConfig& egress, StagePlan& p) {
    if (!sw.dibs.enabled) return;
    p.add(Step::kRefuse, kId);
    p.shim_detours = true;
    if (egress.role == PortRole::kHost) p.add(Step::kDepart, kId);
    if (egress.role == PortRole::kSwitch && sw.dibs.max_detours != 0) p.data_shim = true;
  }
  static DibsSwitch* of(const SwitchRuntime& sw) {
    return static_cast<DibsSwitch*>(sw.module[kId]);
  }
  static DibsPort* at(const PortRuntime& p) { return static_cast<DibsPort*>(p.module[kId]); }

  explicit DibsModule(Worker& w);

  uint8_t arrival(const PortRuntime& in, rte_mbuf* m, const ParsedPacket& pp);
  void refuse(PortRuntime& out, rte_mbuf* m, DropReason why, uint64_t now);
  void redirected(PortRuntime& to, rte_mbuf* m, const MbufMeta& meta, uint64_t now);
  void depart(PortRuntime& port, const TmPacket& p, uint64_t now);
  // Every pass (inline: most lcores publish nothing).
  bool timers(uint64_t now) {
    if (!publish_.empty()) publish_snapshots(now);
    return false;
  }

  static void collect(const Runtime& rt, MetricFamilies& out);
  static void summary_port(const Runtime& rt, uint16_t port, JsonFields& f);
  static void summary_switch(const Runtime& rt, const SwitchRuntime& sw, JsonFields& f);

 private:
  void admit_detour(PortRuntime& to, rte_mbuf* m, MbufMeta meta, uint64_t now);
  // The snapshots other lcores choose detours from (publish_).
  void publish_snapshots(uint64_t now);

  Worker& w_;
  // The candidates (switch, index) whose snapshots this lcore publishes.
  std::vector<std::pair<uint16_t, uint32_t>> publish_;
  std::vector<DetourCandidate> scratch_;  // refuse(): one per candidate port
  // Per switch, per candidate: the room of other lcores' snapshots this one
  // has handed out (empty where the switch's ports do not span lcores).
  std::vector<std::vector<SnapshotClaims>> claims_;
};

}  // namespace sluice
