#include "lib/config/stage_plan.h"

namespace sluice {

// Every port of a PFC or BFC switch plans the same steps today; the egress
// port is an argument because Floodgate's window and credit will apply only
// toward switch-facing ports.
StagePlan plan_stages(const SwitchConfig& sw, const PortConfig& /*egress*/) {
  StagePlan p;
  p.pfc = sw.pfc.mode != PfcGenerationMode::kOff;
  p.bfc = sw.bfc.enabled;
  p.departure = p.pfc || p.bfc;
  return p;
}

}  // namespace sluice
