// The BFC parts of a worker's loop (SPEC 3 step 5, SPEC 4.2) that are not
// one stage's plug-in inline: bookkeeping and resume at departure, and the
// frames sent upstream (across lcores through send_from() when the ingress
// port belongs to another one). Queue assignment and pause counting at admission are in
// queue_choice.h, BFC frames received in stage_ingress_control.cc.
// docs/mechanisms/bfc.md ("In the data path").

#include "lib/net/ethertypes.h"
#include "switch/path/worker.h"

namespace sluice {

// Departure plug-in: the flow table's entry loses the packet, the queue may
// have emptied, and a flagged packet's leaving may resume its upstream queue.
void Worker::bfc_departure(PortRuntime& port, const TmPacket& p, uint64_t now) {
  const MbufExtra* x = mbuf_extra(static_cast<rte_mbuf*>(p.handle));
  BfcTicket t;
  t.entry = x->bfc.entry;
  t.ingress = x->ingress;
  t.upstream_queue = x->upstream_queue;
  t.flagged = x->bfc_flagged != 0;
  const bool empty = port.tm->queue(p.queue).empty();
  if (port.bfc->on_departure(port.index, p.queue, empty, t, now) == BfcSignal::kResume)
    send_bfc(t.ingress, ControlType::kBfcResume, t.upstream_queue, now);
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
  for (size_t s = 0; s < w_.bfc_bitmaps.size(); ++s)
    send_bfc_bitmaps_of(static_cast<uint16_t>(s), now);
}

void Worker::send_bfc_bitmaps_of(uint16_t s, uint64_t now) {
  BitmapSchedule* sched = w_.bfc_bitmaps[s].get();
  if (sched == nullptr || now < sched->next_due_ns()) return;
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

}  // namespace sluice
