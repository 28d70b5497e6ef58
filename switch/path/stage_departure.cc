// Stage: departure (SPEC 3 step 5), on the lcore that owns the egress port,
// for each data packet the schedule step released, before the port sends
// it (residence time was recorded by the traffic manager at dequeue):
//   - PFC: its bytes leave its ingress port's count;
//   - BFC: its flow-table entry and queue bookkeeping, and a resume of its
//     upstream queue (worker_bfc.cc);
//   - Floodgate: its bytes become credit owed to its ingress when that is
//     switch-facing; toward a switch-facing port, the sync and dstPause
//     counts (worker_floodgate.cc);
//   - TCD: marked CE or UE from its queue's state (worker_tcd.cc);
//   - DIBS, leaving the fabric (host-facing port): its detour count goes
//     into the histogram of detours per packet (worker_dibs.cc);
//   - INT: a transport data frame that asks for it gets this port's record
//     (HPCC; worker_int.cc).
// Frames sluice built (ARP, PFC, BFC, Floodgate) pass no departure step. A port whose
// StagePlan has no departure step skips this stage.

#include "switch/path/worker.h"

namespace sluice {

void Worker::depart(PortRuntime& port, const TmPacket* pkts, unsigned n, uint64_t now) {
  for (unsigned i = 0; i < n; ++i) {
    const TmPacket& p = pkts[i];
    const uint16_t aux = p.aux;
    if (aux & kTmAuxGenerated) continue;
    if (port.plan.bfc) bfc_departure(port, p, now);
    if (port.plan.fg_credit) fg_departure(port, p, now);
    if (port.plan.tcd) tcd_departure(port, p, now);
    if (port.plan.dibs_exit) dibs_exit(port, p);
    if (port.plan.int_stamp) int_departure(port, p, now);
    if (aux != 0) {
      rte_mbuf* m = static_cast<rte_mbuf*>(p.handle);
      w_.pfc_bytes[aux - 1].on_dequeue(mbuf_extra(m)->pfc_priority, p.bytes);
      touch_misc(static_cast<uint32_t>(aux - 1));  // its XON may be due
    }
  }
}

}  // namespace sluice
