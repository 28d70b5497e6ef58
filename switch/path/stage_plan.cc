#include "switch/path/stage_plan.h"

#include "switch/mechanisms/registry.h"

namespace sluice {

StagePlan plan_stages(const SwitchConfig& sw, const PortConfig& egress) {
  StagePlan p;
  Modules::each_type([&]<class M>() { M::plan(sw, egress, p); });
  // config_validate keeps queue-choosing modules off such a switch.
  if (port_queueing(sw.tm, egress).kind != QueueingKind::kClass) p.queue_choice = kFlowQueues;
  p.departure = p.steps[static_cast<unsigned>(Step::kDepart)] != 0 ||
                p.steps[static_cast<unsigned>(Step::kRelease)] != 0;
  return p;
}

}  // namespace sluice
