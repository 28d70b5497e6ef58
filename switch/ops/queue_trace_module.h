#pragma once
// --queue-trace as a module of the path (switch/path/module.h): each worker
// lcore samples the egress ports it owns every interval (queue_trace.h), in
// real time from its loop's timers and in exact fabric time as an element
// of the calendar. Its rows carry the modules' own columns where they have
// one (BFC's Th, TCD's state).

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "switch/ops/queue_trace.h"
#include "switch/path/stage_plan.h"
#include "switch/runtime/runtime.h"

namespace sluice {

class Worker;
class FabricLoop;

struct QueueTraceModuleState : ModuleState {
  std::vector<std::unique_ptr<QueueTrace>> traces;  // per lcore slot (nullptr: no port traced)
};

class QueueTraceModule {
 public:
  static constexpr unsigned kId = 6;
  static void plan(const SwitchConfig&, const PortConfig&, StagePlan&) {}
  // Main lcore, before the workers start: a trace on every worker for the
  // ports it owns among `ports` (global indices; empty = all ports).
  static void configure(Runtime& rt, const std::vector<uint16_t>& ports, uint64_t interval_ns,
                        size_t max_rows);
  // Writes every worker's rows, in time order, as CSV: time in seconds of
  // capture (sender) time, the clock of the replayed captures. Call after
  // the workers stopped.
  static bool write(const Runtime& rt, const std::string& path, std::string* error);

  explicit QueueTraceModule(Worker& w);
  bool timers(uint64_t now);
  void elements(FabricLoop& loop);
  QueueTrace* trace() const { return trace_; }

 private:
  Worker& w_;
  QueueTrace* trace_ = nullptr;  // this lcore's
};

}  // namespace sluice
