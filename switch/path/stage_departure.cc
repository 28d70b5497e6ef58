// Stage: departure (SPEC 3 step 5), on the lcore that owns the egress port,
// for each data packet the schedule step released, before the port sends
// it (residence time was recorded by the traffic manager at dequeue). The
// modules' depart steps, in the registry's order (BFC's flow table and
// resume, Floodgate's credit, TCD's mark, DIBS's exit count, INT's record),
// then their release steps (PFC: the packet's bytes leave its ingress's
// count). Frames sluice built (ARP, PFC, BFC, Floodgate) pass no departure
// step. A port whose StagePlan has no departure step skips this stage.

#include <bit>

#include "switch/path/worker.h"

namespace sluice {

void Worker::depart(PortRuntime& port, const TmPacket* pkts, unsigned n, uint64_t now) {
  // One module's depart step is the port's only departure step, and it
  // takes a run at once (depart_run): each stretch between frames sluice
  // built goes to it whole, the same steps in the same order.
  const uint8_t departs = port.plan.steps[static_cast<unsigned>(Step::kDepart)];
  if (port.plan.steps[static_cast<unsigned>(Step::kRelease)] == 0 && std::has_single_bit(departs)) {
    bool done = false;
    each_module([&](auto& m) {
      if constexpr (requires { m.depart_run(port, pkts, n, now); })
        if (departs == 1u << module_id(m)) {
          for (unsigned i = 0; i < n;) {
            if (pkts[i].aux & kTmAuxGenerated) {
              ++i;
              continue;
            }
            unsigned j = i + 1;
            while (j < n && (pkts[j].aux & kTmAuxGenerated) == 0) ++j;
            m.depart_run(port, pkts + i, j - i, now);
            i = j;
          }
          done = true;
        }
    });
    if (done) return;
  }
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
