#include "lib/config/stage_plan.h"

namespace sluice {

// PFC and BFC plan the same steps for every port of their switch;
// Floodgate's window applies only toward switch-facing ports, while its
// credit is earned wherever a packet from a switch-facing port leaves. TCD
// marks at every port of its switch, paused or not (unpaused, it marks like
// DCTCP step marking). DIBS detours refusals toward any egress, host-facing
// ones included.
StagePlan plan_stages(const SwitchConfig& sw, const PortConfig& egress) {
  StagePlan p;
  p.pfc = sw.pfc.mode != PfcGenerationMode::kOff;
  p.bfc = sw.bfc.enabled;
  p.fg_credit = sw.floodgate.enabled;
  p.fg_window = sw.floodgate.enabled && egress.role == PortRole::kSwitch;
  p.tcd = sw.tcd.enabled;
  p.dibs = sw.dibs.enabled;
  p.dibs_exit = sw.dibs.enabled && egress.role == PortRole::kHost;
  p.int_stamp = sw.int_telemetry;
  p.departure = p.pfc || p.bfc || p.fg_credit || p.tcd || p.dibs_exit || p.int_stamp;
  p.data_shim = egress.role == PortRole::kSwitch &&
                (sw.bfc.enabled || (sw.dibs.enabled && sw.dibs.max_detours != 0));
  return p;
}

}  // namespace sluice
