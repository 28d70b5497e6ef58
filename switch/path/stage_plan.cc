#include "switch/path/stage_plan.h"

#include "switch/mechanisms/registry.h"

namespace sluice {

StagePlan plan_stages(const SwitchConfig& sw, const PortConfig& egress) {
  StagePlan p;
  Modules::each_type([&]<class M>() { M::plan(sw, egress, p); });
  // config_validate keeps queue-choosing modules off such a switch.
  if (port_queueing(sw.tm, egress).kind != QueueingKind::kClass) p.queue_choice = kFlowQueues;
  const auto steps = [&](Step s) { return p.steps[static_cast<unsigned>(s)]; };
  p.departure = steps(Step::kDepart) != 0 || steps(Step::kRelease) != 0;
  unsigned at_pass = 0;         // modules whose schedule and depart steps may run at a pass
  unsigned choice_at_pass = 0;  // the module choosing the queue, if its choice passes
  Modules::each_type([&]<class M>() {
    if constexpr (requires { M::kStepsAtPass; })
      if (M::kStepsAtPass) at_pass |= 1u << M::kId;
    if constexpr (requires { M::kChoiceAtPass; })
      if (M::kChoiceAtPass && p.queue_choice == M::kId) choice_at_pass = 1u << M::kId;
    if constexpr (requires { M::kDepartReadsMeta; })
      if (M::kDepartReadsMeta && p.takes(Step::kDepart, M::kId)) p.pass_meta = true;
  });
  p.cuts_through = (p.queue_choice == kClassQueues || choice_at_pass != 0) &&
                   steps(Step::kGate) == 0 && steps(Step::kAccount) == 0 &&
                   steps(Step::kRelease) == 0 && (steps(Step::kSchedule) & ~at_pass) == 0 &&
                   (steps(Step::kDepart) & ~(at_pass | choice_at_pass)) == 0;
  if (!egress.cut_through) p.cuts_through = false;  // the configuration keeps it queued
  p.pass_steps = ((steps(Step::kSchedule) | steps(Step::kDepart)) & ~choice_at_pass) != 0;
  return p;
}

}  // namespace sluice
