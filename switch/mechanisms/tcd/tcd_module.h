#pragma once
// TCD, ternary congestion detection, in the path (SPEC 4.4;
// docs/mechanisms/tcd.md, "In the data path"; the rules are
// lib/mechanisms/tcd), on the lcore that owns the egress port:
//   - before each schedule: the queues its traffic manager holds paused
//     (PFC class, 802.3x PAUSE, BFC) turn the detectors OFF and ON; a pause
//     that ran out is ON again from its expiry;
//   - departure: every ECN-capable IPv4 data packet is marked from its
//     queue's state (CE or UE; never downgraded);
//   - timer: idle queues leave undetermined on time, and the time in each
//     state is settled for the scraper.
// The traffic manager's own ECN marking at enqueue is off on a TCD switch.

#include <memory>
#include <string>
#include <vector>

#include "lib/mechanisms/tcd/tcd_port.h"
#include "switch/emulator/fabric_loop.h"
#include "switch/ops/module_reports.h"
#include "switch/path/stage_plan.h"
#include "switch/runtime/runtime.h"

namespace sluice {

class Worker;

struct TcdModuleState : ModuleState {
  std::vector<std::unique_ptr<TcdPort>> ports;  // per global port (nullptr: off)
};

class TcdModule {
 public:
  static constexpr unsigned kId = 3;
  // A packet that cuts through leaves an empty, unpaused queue, which is
  // what the mark reads after a lone packet's dequeue (module.h).
  static constexpr bool kStepsAtPass = true;
  static std::string build(Runtime& rt);
  // TCD tracks pauses and marks at departure on every port of its switch,
  // paused or not (unpaused, it marks like DCTCP step marking).
  static void plan(const SwitchConfig& sw, const PortConfig&, StagePlan& p) {
    if (!sw.tcd.enabled) return;
    p.add(Step::kSchedule, kId);
    p.add(Step::kDepart, kId);
  }
  static TcdPort* at(const PortRuntime& p) { return static_cast<TcdPort*>(p.module[kId]); }
  static bool runs_at(const PortRuntime& p) { return p.plan.takes(Step::kDepart, kId); }

  explicit TcdModule(Worker& w);

  void before_schedule(PortRuntime& port, uint64_t now) { track_pauses(port, now); }
  void depart(PortRuntime& port, const TmPacket& p, uint64_t now);
  void slow_timers(PortRuntime& port, uint64_t now);
  void finish_port(PortRuntime& port, uint64_t end_ns) { slow_timers(port, end_ns); }
  // Exact time: TCD sees a pause or resume the instant it is received, and
  // a pause end whether or not frames wait (the port's timers' part).
  // Inline: asked for every frame a port moves. Whether TCD runs at the
  // port is read from its plan, in the port's first line, rather than from
  // its state pointer two lines on (the same ports: both follow tcd.enabled).
  uint8_t port_received(PortRuntime& port, uint64_t now) {
    if (!runs_at(port)) return 0;
    track_pauses(port, now);
    return FabricLoop::kMisc;
  }
  uint8_t port_transmitted(const PortRuntime& port) const {
    return runs_at(port) ? FabricLoop::kMisc : 0;
  }
  uint64_t port_timers_due(const PortRuntime& port, uint64_t now) const;
  void port_timers(PortRuntime& port, uint64_t now);

  // The queue trace's column: 1 + the queue's last state, 0 off TCD.
  static uint8_t queue_state(const PortRuntime& port, uint32_t queue);
  static void collect(const Runtime& rt, MetricFamilies& out);
  static void summary_port(const Runtime& rt, uint16_t port, JsonFields& f);

 private:
  void track_pauses(PortRuntime& port, uint64_t now);
  Worker& w_;
};

}  // namespace sluice
