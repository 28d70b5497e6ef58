// The BFC parts of a worker's loop (SPEC 3 steps 3 and 5, SPEC 4.2): queue
// assignment and pause counting at admission, bookkeeping and resume at
// departure, BFC frames received from downstream, and frames sent upstream,
// across lcores when the ingress port belongs to another one.
// docs/mechanisms/bfc.md ("In the data path").

#include <rte_ring.h>

#include <algorithm>

#include "lib/control/control_intake.h"
#include "lib/pfc/pfc_classes.h"
#include "lib/net/ethertypes.h"
#include "switch/worker.h"

namespace sluice {
namespace {

// Index of a BFC frame type in PortCounters::bfc_sent / bfc_received.
unsigned bfc_index(ControlType t) { return static_cast<unsigned>(t) - 3; }

bool is_bfc(ControlType t) {
  return t == ControlType::kBfcPause || t == ControlType::kBfcResume ||
         t == ControlType::kBfcBitmap;
}

// A 16-bit load the compiler may not merge with its neighbour's.
uint16_t load_u16(const uint16_t* p) { return __atomic_load_n(p, __ATOMIC_RELAXED); }

void raise_to(RelaxedCounter& peak, uint64_t v) {
  if (v > peak.get()) peak.set(v);
}

}  // namespace

void Worker::admit_bfc(PortRuntime& out, rte_mbuf* m, const MbufMeta& meta, uint64_t now) {
  MbufExtra* x = mbuf_extra(m);
  BfcTicket t;
  // route_ipv4 has just stored these two fields with two 16-bit stores; one
  // 32-bit load of both cannot be forwarded from them and waits until both
  // reach the cache, so load them separately.
  t.ingress = load_u16(&x->ingress);
  t.upstream_queue = load_u16(&x->upstream_queue);
  const uint16_t q = out.bfc->assign(out.index, x->flow_hash, now, &t);
  uint8_t* ip = write_l2(out, m, meta.l3_offset, q);
  TmPacket tp;
  tp.handle = m;
  tp.bytes = m->pkt_len;
  // PFC toward hosts: only host-facing ingress ports have PFC on a BFC switch.
  const uint16_t pfc_in = pfc_ingress_of(out, m);
  if (pfc_in != kNoIngress) tp.aux = static_cast<uint16_t>(pfc_in + 1);
  const uint64_t depth = out.tm->queue_bytes(q);
  const EnqueueResult r = out.tm->enqueue(now, q, tp, meta.ecn_capable);
  // Dropped: assign() only decided, so the shard is as before the packet.
  if (r.verdict == EnqueueVerdict::kDropped) return drop(out.index, m, r.reason);
  if (pfc_in != kNoIngress) count_pfc_ingress(out, m, pfc_in, meta.queue, tp.bytes);
  const uint64_t paused = out.bfc_upstream ? out.bfc_upstream->paused_mask() : 0;
  const BfcSignal s = out.bfc->on_enqueued(out.index, q, depth, paused, now, &t);
  x->bfc_entry = t.entry;
  x->bfc_flagged = t.flagged;
  const uint64_t after = depth + tp.bytes;
  raise_to(out.bfc_peak_queue_bytes, after);
  const uint64_t th = out.bfc->last_threshold(out.index);
  if (after > th) raise_to(out.bfc_peak_excess_bytes, after - th);
  if (r.verdict == EnqueueVerdict::kEnqueuedMarked) mark_ce(counters(out.index), ip);
  if (s == BfcSignal::kPause) send_bfc(t.ingress, ControlType::kBfcPause, t.upstream_queue, now);
}

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

// A sluice control frame from the peer: only a switch-facing port of a BFC
// switch acts on one, and only on BFC types (Floodgate's are not built yet).
void Worker::handle_sluice_control(PortRuntime& in, rte_mbuf* m, const ParsedPacket& pp) {
  ControlMessage msg;
  const DropReason r = check_control_frame(rte_pktmbuf_mtod(m, const uint8_t*), m->data_len,
                                           pp.l3_offset, in.cfg->role, in.mac, &msg);
  if (r != DropReason::kCount) return drop(in.index, m, r);
  if (!in.bfc_upstream || !is_bfc(msg.type))
    return drop(in.index, m, DropReason::kControlUnsupported);
  if (!in.bfc_upstream->on_message(msg)) return drop(in.index, m, DropReason::kControlInvalid);
  PortCounters& c = counters(in.index);
  c.bfc_received[bfc_index(msg.type)].add();
  c.rx_consumed_packets.add();
  rte_pktmbuf_free(m);
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
  counters(port_index).bfc_sent[bfc_index(type)].add();
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
      counters(p).bfc_sent[bfc_index(ControlType::kBfcBitmap)].add();
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
