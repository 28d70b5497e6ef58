#pragma once
// INT's departure step (HPCC: High Precision Congestion Control, section
// 3.2): a transport data frame that asks for in-band telemetry gets this
// egress port's record: the departure instant, the data bytes the port sent
// before it, the bytes queued at the port, and its rate. The rule and the
// record's layout are lib/mechanisms/int/int_stamp.h.

#include <memory>
#include <string>

#include "lib/common/relaxed_counter.h"
#include "switch/ops/module_reports.h"
#include "switch/path/stage_plan.h"
#include "switch/runtime/runtime.h"

namespace sluice {

class Worker;

// One egress port of a switch with `int` (owner lcore writes; the counters
// may be read by any thread).
struct IntPort {
  uint64_t tx_bytes = 0;  // data bytes this port transmitted
  RelaxedCounter stamped;  // records written into transport data frames
  RelaxedCounter full;     // frames that asked with every hop slot filled
};

struct IntModuleState : ModuleState {
  std::unique_ptr<IntPort[]> ports;  // per global port
};

class IntModule {
 public:
  static constexpr unsigned kId = 5;
  static std::string build(Runtime& rt);
  // Every port of a switch with `int` stamps.
  static void plan(const SwitchConfig& sw, const PortConfig&, StagePlan& p) {
    if (sw.int_telemetry) p.add(Step::kDepart, kId);
  }
  static IntPort* at(const PortRuntime& p) { return static_cast<IntPort*>(p.module[kId]); }

  explicit IntModule(Worker&) {}
  void depart(PortRuntime& port, const TmPacket& p, uint64_t now);

  static void summary_port(const Runtime& rt, uint16_t port, JsonFields& f);
};

}  // namespace sluice
