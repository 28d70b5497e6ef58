#pragma once
// Queue choice, the admission step between window/VOQ and buffer admission
// (stage_admission.cc), and its accounting once the traffic manager took the
// packet. One of two, fixed per switch: by class (the queue forward took
// from the class map), or by BFC's flow table with its pause counting
// (docs/mechanisms/bfc.md). Worker::admit_with is instantiated for each, so
// neither pays for the other. Included by stage_admission.cc only.

#include "switch/path/worker.h"

namespace sluice {

struct Worker::ClassQueues {
  uint16_t choose(PortRuntime&, rte_mbuf*, const MbufMeta& meta, uint64_t) { return meta.queue; }
  void on_enqueued(Worker&, PortRuntime&, uint16_t, uint32_t, uint64_t) {}
};

struct Worker::BfcQueues {
  MbufExtra* x = nullptr;
  BfcTicket ticket;
  uint64_t depth = 0;  // the chosen queue's bytes before the packet

  // Decides only: a packet dropped by buffer admission leaves the shard as
  // it was.
  uint16_t choose(PortRuntime& out, rte_mbuf* m, const MbufMeta&, uint64_t now) {
    x = mbuf_extra(m);
    // forward() has just stored these two fields with two 16-bit stores; one
    // 32-bit load of both cannot be forwarded from them and waits until both
    // reach the cache, so load them separately.
    ticket.ingress = load_u16(&x->ingress);
    ticket.upstream_queue = load_u16(&x->upstream_queue);
    const uint16_t q = out.bfc->assign(out.index, x->bfc.flow_hash, now, &ticket);
    depth = out.tm->queue_bytes(q);
    return q;
  }

  // The entry takes the packet; above Th it is flagged and may pause its
  // upstream queue.
  void on_enqueued(Worker& w, PortRuntime& out, uint16_t q, uint32_t bytes, uint64_t now) {
    const uint64_t paused = out.bfc_upstream ? out.bfc_upstream->paused_mask() : 0;
    const BfcSignal s = out.bfc->on_enqueued(out.index, q, depth, paused, now, &ticket);
    x->bfc.entry = ticket.entry;
    x->bfc_flagged = ticket.flagged;
    const uint64_t after = depth + bytes;
    raise_to(out.bfc_peak_queue_bytes, after);
    const uint64_t th = out.bfc->last_threshold(out.index);
    if (after > th) raise_to(out.bfc_peak_excess_bytes, after - th);
    if (s == BfcSignal::kPause)
      w.send_bfc(ticket.ingress, ControlType::kBfcPause, ticket.upstream_queue, now);
  }

  // A 16-bit load the compiler may not merge with its neighbour's.
  static uint16_t load_u16(const uint16_t* p) { return __atomic_load_n(p, __ATOMIC_RELAXED); }
  static void raise_to(RelaxedCounter& peak, uint64_t v) {
    if (v > peak.get()) peak.set(v);
  }
};

}  // namespace sluice
