// Stage: departure (SPEC 3 step 5), on the lcore that owns the egress port,
// for each data packet the schedule step released, before the port sends
// it (residence time was recorded by the traffic manager at dequeue). The
// modules' depart steps, in the registry's order (BFC's flow table and
// resume, Floodgate's credit, TCD's mark, DIBS's exit count, INT's record),
// then their release steps (PFC: the packet's bytes leave its ingress's
// count). Frames sluice built (ARP, PFC, BFC, Floodgate) pass no departure
// step. A port whose StagePlan has no departure step skips this stage.

#include "switch/path/worker.h"

namespace sluice {

void Worker::depart(PortRuntime& port, const TmPacket* pkts, unsigned n, uint64_t now) {
  for (unsigned i = 0; i < n; ++i) {
    const TmPacket& p = pkts[i];
    if (p.aux & kTmAuxGenerated) continue;
    each_module([&](auto& m) {
      if constexpr (requires { m.depart(port, p, now); })
        if (port.plan.takes(Step::kDepart, module_id(m))) m.depart(port, p, now);
    });
    each_module([&](auto& m) {
      if constexpr (requires { m.release(port, p, now); })
        if (port.plan.takes(Step::kRelease, module_id(m))) m.release(port, p, now);
    });
  }
}

}  // namespace sluice
