// The BFC parts of a worker's loop (SPEC 3 step 5, SPEC 4.2) that are not
// one stage's plug-in inline: bookkeeping and resume at departure, and the
// frames sent upstream, across lcores when the ingress port belongs to
// another one. Queue assignment and pause counting at admission are in
// queue_choice.h, BFC frames received in stage_ingress_control.cc.
// docs/mechanisms/bfc.md ("In the data path").

#include <rte_ring.h>

#include "lib/net/ethertypes.h"
#include "switch/worker.h"

namespace sluice {

// Departure plug-in: the flow table's entry loses the packet, the queue may
// have emptied, and a flagged packet's leaving may resume its upstream queue.
void Worker::bfc_departure(PortRuntime& port, const TmPacket& p, uint64_t now) {
  const MbufExtra* x = mbuf_extra(static_cast<rte_mbuf*>(p.handle));
  BfcTicket t;
  t.entry = x->bfc_entry;
  t.ingress = x->ingress;
  t.upstream_queue = x->upstream_queue;
  t.flagged = x->bfc_flagged != 0;
  const bool empty = port.tm->queue(p.queue).empty();
  if (port.bfc->on_departure(port.index, p.queue, empty, t, now) == BfcSignal::kResume)
    send_bfc(t.ingress, ControlType::kBfcResume, t.upstream_queue, now);
}

// A minimum-size frame for the port's peer, with *dst its MAC; nullptr (and
// counted in control_lost: the next bitmap repairs it) when the peer MAC is
// not known yet or the pool is empty.
rte_mbuf* Worker::new_frame_to_peer(PortRuntime& port, uint8_t** frame, MacAddr* dst) {
  const uint64_t peer = port.peer_mac.load(std::memory_order_relaxed);
  rte_mbuf* m = (peer >> 48) != 0 ? new_frame(kEthMinFrameLen, frame) : nullptr;
  if (m == nullptr) {
    counters(port.index).control_lost.add();
    return nullptr;
  }
  *dst = unpack_mac(peer);
  return m;
}

// BFC_PAUSE or BFC_RESUME of upstream queue `queue`, out of port `port_index`.
void Worker::send_bfc(uint16_t port_index, ControlType type, uint16_t queue, uint64_t now) {
  PortRuntime& port = *ports_[port_index];
  uint8_t* frame;
  MacAddr dst;
  rte_mbuf* m = new_frame_to_peer(port, &frame, &dst);
  if (m == nullptr) return;
  const uint8_t shard = static_cast<uint8_t>(w_.slot);
  if (type == ControlType::kBfcPause)
    build_bfc_pause(frame, kEthMinFrameLen, dst, port.mac, shard, queue);
  else
    build_bfc_resume(frame, kEthMinFrameLen, dst, port.mac, shard, queue);
  counters(port_index).bfc_sent[bfc_frame_index(type)].add();
  send_from(port, m, now);
}

// Every shard re-sends, per switch-facing port, the upstream queues it holds
// paused there, so that a lost pause or resume heals within one interval.
void Worker::send_bfc_bitmaps(uint64_t now) {
  for (size_t s = 0; s < w_.bfc_bitmaps.size(); ++s) {
    BitmapSchedule* sched = w_.bfc_bitmaps[s].get();
    if (sched == nullptr || now < sched->next_due_ns()) continue;
    const PauseCounters& held = w_.bfc[s]->counters();
    sched->poll(now, [&](uint16_t p) {
      PortRuntime& port = *ports_[p];
      uint8_t* frame;
      MacAddr dst;
      rte_mbuf* m = new_frame_to_peer(port, &frame, &dst);
      if (m == nullptr) return;
      const uint64_t words[1] = {held.paused_mask(p)};
      build_bfc_bitmap(frame, kEthMinFrameLen, dst, port.mac, static_cast<uint8_t>(w_.slot), words,
                       kMaxUpstreamQueues);
      counters(p).bfc_sent[bfc_frame_index(ControlType::kBfcBitmap)].add();
      send_from(port, m, now);
    });
  }
}

// A frame sluice built leaves `port` ahead of data: queued directly when this
// lcore owns the port, otherwise over the owner's control ring.
void Worker::send_from(PortRuntime& port, rte_mbuf* m, uint64_t now) {
  if (port.owner_slot == w_.slot) {
    send_control(port, now, m);  // a full control queue is counted there
    return;
  }
  mbuf_meta_set(m, MbufMeta{port.index, 0, 0, false});
  if (rte_ring_mp_enqueue(rt_.workers[port.owner_slot]->control_in, m) != 0) {
    counters(port.index).control_lost.add();
    rte_pktmbuf_free(m);
  }
}

bool Worker::drain_control(uint64_t now) {
  rte_mbuf* pkts[kBurst];
  const unsigned n =
      rte_ring_sc_dequeue_burst(w_.control_in, reinterpret_cast<void**>(pkts), kBurst, nullptr);
  for (unsigned i = 0; i < n; ++i)
    send_control(*ports_[mbuf_meta_get(pkts[i]).egress_port], now, pkts[i]);
  return n > 0;
}

}  // namespace sluice
