// Stage: admission (SPEC 3 step 3), on the lcore that owns the egress port.
// Every data packet takes the same steps in this order; a mechanism plugs
// into a step, it never takes the path over:
//   1. window / VOQ   Floodgate, toward a switch-facing port: a packet whose
//                     destination's window is short waits in a VOQ before it
//                     has a queue (worker_floodgate.cc);
//   2. queue choice   by class, or by BFC (queue_choice.h), then the L2
//                     rewrite for that queue;
//   3. buffer         the traffic manager's shared buffer and queue, which
//      admission      also decides an ECN mark; a refused packet goes to
//                     refuse(), where DIBS detours it to another
//                     switch-facing port (worker_dibs.cc);
//   4. accounting     PFC bytes at the ingress, BFC pause counting, the
//                     ECN mark.
// Which optional steps run is the egress port's StagePlan.

#include <cstring>

#include "lib/control/data_shim.h"
#include "lib/net/ethertypes.h"
#include "lib/net/ipv4_rewrite.h"
#include "lib/mechanisms/pfc/pfc_classes.h"
#include "switch/path/queue_choice.h"
#include "switch/path/worker.h"

namespace sluice {

void Worker::admit(rte_mbuf* m, uint64_t now) {
  const MbufMeta meta = mbuf_meta_get(m);
  PortRuntime& out = *ports_[meta.egress_port];
  // A detour another lcore chose for this port (worker_dibs.cc).
  if (meta.detour) [[unlikely]]
    return admit_detour(out, m, meta, now);
  counters(out.index).forwarded_packets.add();
  if (!out.eth_header_ready) return drop_data(out, m, DropReason::kNoNeighbor, false, now);
  // 1. Window / VOQ.
  if (out.plan.fg_window && !fg_window(out, m, meta, now)) return;
  if (out.plan.bfc) return admit_with<BfcQueues>(out, m, meta, now, false);
  admit_with<ClassQueues>(out, m, meta, now, false);
}

// Floodgate released a VOQ packet (its window debited): steps 2 to 4. It
// was admitted to the buffer when it entered the VOQ; only the queue's
// ring can refuse it now.
void Worker::admit_released(PortRuntime& out, rte_mbuf* m, uint64_t now) {
  admit_with<ClassQueues>(out, m, mbuf_meta_get(m), now, true);
}

// Steps 2 to 4; Queues is the queue choice (queue_choice.h). held: the
// packet's bytes are in the buffer already (a Floodgate VOQ released it).
template <class Queues>
void Worker::admit_with(PortRuntime& out, rte_mbuf* m, const MbufMeta& meta, uint64_t now,
                        bool held) {
  Queues queues;
  const uint16_t q = queues.choose(out, m, meta, now);
  uint8_t* ip = write_l2(out, m, meta, q);
  TmPacket tp;
  tp.handle = m;
  tp.bytes = m->pkt_len;
  const uint16_t pfc_in = pfc_ingress_of(out, m);
  if (pfc_in != kNoIngress) tp.aux = static_cast<uint16_t>(pfc_in + 1);
  const EnqueueResult r = held ? out.tm->enqueue_held(now, q, tp, meta.ecn_capable)
                               : out.tm->enqueue(now, q, tp, meta.ecn_capable);
  if (r.verdict == EnqueueVerdict::kDropped) return refuse(out, m, r.reason, now);
  if (pfc_in != kNoIngress) count_pfc_ingress(out, m, pfc_in, meta.queue, tp.bytes);
  queues.on_enqueued(*this, out, q, tp.bytes, now);
  if (r.verdict == EnqueueVerdict::kEnqueuedMarked) mark_ce(counters(out.index), ip);
  if (exact_) [[unlikely]]
    exact_admitted(out, now);
}

// Buffer admission refused the packet: DIBS detours it to another
// switch-facing port that admits it (worker_dibs.cc); otherwise it is
// dropped and counted under the traffic manager's reason.
void Worker::refuse(PortRuntime& out, rte_mbuf* m, DropReason why, uint64_t now) {
  if (out.plan.dibs) return detour(out, m, now);
  drop_data(out, m, why, out.plan.fg_window, now);
}

void Worker::drop_data(PortRuntime& out, rte_mbuf* m, DropReason why, bool debited, uint64_t now) {
  if (out.plan.fg_credit) fg_dropped(out, m, debited, now);
  drop(out.index, m, why);
}

// The ingress port a data packet to `out` is counted against for PFC
// (TmPacket::aux = ingress + 1 until it leaves), or kNoIngress.
uint16_t Worker::pfc_ingress_of(const PortRuntime& out, rte_mbuf* m) {
  if (!out.plan.pfc) return kNoIngress;
  const uint16_t in = mbuf_extra(m)->ingress;
  return ports_[in]->pfc_ingress ? in : kNoIngress;
}

// VLAN tags and shims do not survive a routed hop: a fresh Ethernet header
// goes right before the IP header, followed toward a BFC peer by the 0x88B6
// shim that names the queue the packet takes here. Returns the IP header.
uint8_t* Worker::write_l2(PortRuntime& out, rte_mbuf* m, const MbufMeta& meta, uint16_t queue) {
  const uint8_t l3_offset = meta.l3_offset;
  const uint32_t len = data_l3_offset(out);
  if (l3_offset > len) {
    rte_pktmbuf_adj(m, static_cast<uint16_t>(l3_offset - len));
  } else if (l3_offset < len) {
    // Within the headroom every received mbuf has (RTE_PKTMBUF_HEADROOM).
    rte_pktmbuf_prepend(m, static_cast<uint16_t>(len - l3_offset));
  }
  uint8_t* eth = rte_pktmbuf_mtod(m, uint8_t*);
  std::memcpy(eth, out.eth_header, kEthHeaderLen);
  if (out.plan.data_shim) {
    const uint8_t detours = out.plan.dibs && meta.has_detours ? mbuf_extra(m)->detours : 0;
    store_be16(eth + kEthHeaderLen - 2, kEtherTypeSluiceData);
    write_shim(eth + kEthHeaderLen,
               DataShim{queue, static_cast<uint8_t>(w_.slot), detours, kEtherTypeIpv4});
  }
  return eth + len;
}

// PFC counts a packet's bytes at its ingress under the priority of its own
// class (the queue the class map gave it), remembered for the dequeue: BFC
// moves packets to other queues, whose priorities say nothing about them.
void Worker::count_pfc_ingress(const PortRuntime& out, rte_mbuf* m, uint16_t ingress,
                               uint16_t class_queue, uint32_t bytes) {
  const uint8_t prio = priority_of_queue(class_queue, out.tm->num_queues());
  mbuf_extra(m)->pfc_priority = prio;
  w_.pfc_bytes[ingress].on_enqueue(prio, bytes);
  touch_misc(ingress);  // its XOFF may be due
}

void Worker::mark_ce(PortCounters& c, uint8_t* ip) {
  if (ipv4_ecn(ip) != kEcnCe) ipv4_set_ecn(ip, kEcnCe);
  c.ecn_marks.add();
}

}  // namespace sluice
