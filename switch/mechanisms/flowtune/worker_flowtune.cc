// Flowtune at an edge switch (docs/mechanisms/flowtune.md, "Edge switches"):
// a packet a host sends in is forwarded, then, before admission, counted
// into its flowlet and paced at its flow's rate; the allocator hears of
// flowlets starting and ending and answers with rates. A flow without a
// fresh rate goes on unpaced, so the allocator failing never stops traffic.

#include <algorithm>

#include "lib/mechanisms/flowtune/flow_key.h"
#include "lib/net/ipv4_rewrite.h"
#include "lib/emulator/transport/segment_wire.h"
#include "switch/path/worker.h"

namespace sluice {
namespace {

// Slots the idle scan looks at per pass (every kExpireEveryNs): a whole
// sweep of the default 4096 takes 8 passes (160 µs), which is how late a
// FLOWLET_END may be after the idle gap.
constexpr uint32_t kExpireSlotsPerPass = 512;
// Held packets released per loop iteration, per edge.
constexpr uint32_t kReleasePerPass = 256;

}  // namespace

// True: the packet goes on to admission now. False: the pacer holds it (it
// comes back through flowtune_timers) or dropped it.
bool Worker::flowtune_pace(PortRuntime& in, rte_mbuf* m, const ParsedPacket& pp, uint64_t now) {
  FlowtuneEdge& e = *in.flowtune;
  // pace_at: host: only a transport host's data makes a flowlet. Its ACKs
  // are no flow the allocator should give a share of the links (the
  // paper's servers report data flowlets only, section 4).
  if (e.cfg.pace_at_host && in.pcap && in.pcap->transport_host()) {
    uint32_t flow;
    if (m->data_len <= pp.l3_offset ||
        !transport_data_flow(rte_pktmbuf_mtod(m, const uint8_t*) + pp.l3_offset,
                             m->data_len - pp.l3_offset, &flow))
      return true;
  }
  const uint64_t key = flowlet_key(pp.src_ip, pp.dst_ip, pp.proto, pp.src_port, pp.dst_port);
  const FlowletTable::Result r =
      e.flowlets.on_packet(key, pp.src_ip, pp.dst_ip, now - unwatched_ns_);
  if (r.ended_flow_id != 0) flowtune_end(e, r.ended_flow_id, now);
  if (r.kind == FlowletTable::Kind::kUntracked) return true;
  if (r.kind == FlowletTable::Kind::kStart) {
    e.pacer.start(r.flow_id);
    e.report_start(r.flow_id, pp.src_ip, pp.dst_ip, now);
    ft_touch(e);  // its idle gap runs out from now
    ft_touch_allocator();
    if (e.cfg.pace_at_host) note_host_flow(e, in, m, pp, r.flow_id);
  }
  // The endpoint paces itself (flowtune_host_rate); the edge only tells
  // the allocator of flowlets.
  if (e.cfg.pace_at_host) return true;
  const uint32_t bytes = m->pkt_len + in.cfg->wire_overhead_bytes;
  const FlowPacer::Verdict v = e.pacer.admit(r.flow_id, bytes, now);
  switch (v.action) {
    case FlowPacer::Action::kSend:
      return true;
    case FlowPacer::Action::kUnpaced:
      // The lease ran out with packets still held: they leave first, so
      // the flow stays in order.
      flowtune_flush(e, e.flowlets.slot_of(r.flow_id), now);
      return true;
    case FlowPacer::Action::kDrop:
      drop(in.index, m, DropReason::kPacerFull);
      return false;
    case FlowPacer::Action::kHold:
      break;
  }
  if (!e.held.push(e.flowlets.slot_of(r.flow_id), {m, v.send_at_ns, r.flow_id, bytes})) {
    e.pacer.sent(r.flow_id, bytes);  // cannot happen while the pacer bounds the queue
    drop(in.index, m, DropReason::kPacerFull);
    return false;
  }
  e.flowlets.touch(r.flow_id, v.send_at_ns - unwatched_ns_);
  ft_touch(e);  // a packet held until send_at_ns
  if (v.ecn_mark && (pp.tos & 3) != 0)
    mark_ce(counters(in.index), rte_pktmbuf_mtod(m, uint8_t*) + pp.l3_offset);
  return false;
}

// A flowlet ended: what it still holds leaves now (the next flowlet in its
// slot starts its own queue), and the allocator is told. A held packet
// keeps its flowlet active until it is due (FlowletTable::touch), so the
// flush should find nothing; it stays so that one slot's queue can never
// mix two flowlets.
void Worker::flowtune_end(FlowtuneEdge& e, uint32_t flow_id, uint64_t now) {
  flowtune_flush(e, e.flowlets.slot_of(flow_id), now);
  e.report_end(flow_id, now);
  ft_touch_allocator();
}

void Worker::flowtune_flush(FlowtuneEdge& e, uint32_t slot, uint64_t now) {
  e.held.flush(slot, [&](const PacedQueues::Held& h) {
    e.flushed.add();
    release_held(e, h, now);
  });
}

// A held packet leaves the pacer's queue and goes on to admission.
void Worker::release_held(FlowtuneEdge& e, const PacedQueues::Held& h, uint64_t now) {
  e.pacer.sent(h.flow_id, h.bytes);
  to_admission(static_cast<rte_mbuf*>(h.pkt), now);
}

void Worker::to_admission(rte_mbuf* m, uint64_t now) {
  const PortRuntime& out = *ports_[mbuf_meta_get(m).egress_port];
  if (out.owner_slot == w_.slot) {
    admit(m, now);
  } else {
    stage_remote(out.owner_slot, m, now);
  }
}

// Rates that arrived apply; held packets that are due go on to admission;
// every kExpireEveryNs the idle flowlets end.
bool Worker::flowtune_timers(uint64_t now) {
  bool busy = false;
  for (FlowtuneEdge* e : ft_edges_) {
    e->apply_rates(now);
    if (e->held.next_due_ns() <= now) {
      busy |= e->held.pop_due(now, kReleasePerPass,
                              [&](const PacedQueues::Held& h) { release_held(*e, h, now); }) != 0;
    }
    if (now >= e->next_expire_ns) {
      e->next_expire_ns = now + FlowtuneEdge::kExpireEveryNs;
      e->flowlets.expire(now - unwatched_ns_, kExpireSlotsPerPass,
                         [&](uint32_t id) { flowtune_end(*e, id, now); });
    }
  }
  return busy;
}

// Exact time: the edge's held packets that are due go on to admission, and
// a whole sweep of its flowlet table runs when the first idle gap runs out,
// so every FLOWLET_END leaves at the instant its flowlet ended. (A lease
// that runs out needs no timer: the flow's next packet finds it so.)
void Worker::flowtune_edge_exact(FlowtuneEdge& e, uint64_t now) {
  if (e.held.next_due_ns() <= now) {
    e.held.pop_due(now, kReleasePerPass,
                   [&](const PacedQueues::Held& h) { release_held(e, h, now); });
  }
  if (e.flowlets.next_end_ns() <= now) {
    e.flowlets.expire(now, e.flowlets.capacity(), [&](uint32_t id) { flowtune_end(e, id, now); });
  }
}

uint64_t Worker::flowtune_edge_due(const FlowtuneEdge& e, uint64_t now) const {
  const uint64_t due = std::min(e.held.next_due_ns(), e.flowlets.next_end_ns());
  return due == EventCalendar::kNever ? due : std::max(due, now);
}

// Exact time: what the allocator in the fabric has due now; each rate that
// reached its edge goes to the pacer (no edge timer moves: a rate changes
// the pace of packets still to come), or with pace_at: host to the
// transport host that sends the flow.
void Worker::flowtune_allocator_exact(uint64_t now) {
  rt_.flowtune_allocator->run(now, [&](uint32_t edge, uint32_t flow_id, uint32_t kbps) {
    FlowtuneEdge& e = *rt_.flowtune_edges[edge];
    if (e.cfg.pace_at_host) {
      flowtune_host_rate(e, flow_id, kbps, now);
    } else {
      e.apply_rate(flow_id, kbps, now);
    }
  });
}

// pace_at: host: a flowlet's first packet says which transport host and
// flow it is (a packet that is not a transport host's data leaves the slot
// unknown, and its rates unused).
void Worker::note_host_flow(FlowtuneEdge& e, const PortRuntime& in, const rte_mbuf* m,
                            const ParsedPacket& pp, uint32_t flowlet) {
  FlowtuneEdge::HostFlow& h = e.host_flows[e.flowlets.slot_of(flowlet)];
  h.flowlet = 0;
  uint32_t flow;
  if (!in.pcap || !in.pcap->transport_host() || m->data_len <= pp.l3_offset) return;
  if (!transport_data_flow(rte_pktmbuf_mtod(m, const uint8_t*) + pp.l3_offset,
                           m->data_len - pp.l3_offset, &flow))
    return;
  h = {flowlet, in.index, flow};
}

// pace_at: host: a rate reached the edge; the sending host paces the flow
// at it for a lease (the paper's servers, section 4).
void Worker::flowtune_host_rate(FlowtuneEdge& e, uint32_t flowlet, uint32_t kbps, uint64_t now) {
  const FlowtuneEdge::HostFlow& h = e.host_flows[e.flowlets.slot_of(flowlet)];
  if (h.flowlet != flowlet) return;
  PortRuntime& port = *ports_[h.port];
  if (port.pcap->transport_host()->set_allocation(h.flow, now, uint64_t{kbps} * 1000,
                                                  now + e.cfg.lease_ns)) {
    e.rate_updates.add();
    if (exact_) exact_touch(port.index, kDueRx);
  }
}

// Stopping: every held packet goes on to admission, to be sent or counted
// with the rest of what is queued.
void Worker::flowtune_release_all(uint64_t now) {
  for (FlowtuneEdge* e : ft_edges_) {
    e->held.pop_due(PacedQueues::kNever - 1, UINT32_MAX,
                    [&](const PacedQueues::Held& h) { release_held(*e, h, now); });
  }
}

}  // namespace sluice
