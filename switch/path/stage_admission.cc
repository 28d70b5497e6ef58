// Stage: admission (SPEC 3 step 3), on the lcore that owns the egress port.
// Every data packet takes the same steps in this order; a module plugs into
// a step, it never takes the path over (switch/path/module.h):
//   1. gate           a module may hold the packet before it has a queue
//                     (Floodgate's window / VOQ, toward a switch);
//   2. queue choice   the class map's, or a module's (BFC's flow table),
//                     then the L2 rewrite for that queue;
//   3. buffer         the traffic manager's shared buffer and queue, which
//      admission      also decides an ECN mark; a refused packet goes to a
//                     module's refuse step (DIBS detours it) or is dropped;
//   4. accounting     the modules' account steps (PFC bytes at the
//                     ingress), the queue choice's own (BFC pause
//                     counting), the ECN mark.
// Which steps run is the egress port's StagePlan.

#include <cstring>

#include "lib/control/data_shim.h"
#include "lib/emulator/transport/segment_wire.h"
#include "lib/net/ethertypes.h"
#include "lib/net/ipv4_rewrite.h"
#include "switch/path/worker.h"

namespace sluice {

// The class map's queue, chosen at forward.
struct Worker::ClassQueues {
  uint16_t choose(Worker&, PortRuntime&, rte_mbuf*, const MbufMeta& meta, uint64_t) {
    return meta.queue;
  }
  void on_enqueued(Worker&, PortRuntime&, uint16_t, uint32_t, uint64_t) {}
};

// A reply on a port whose queue a module chooses: the reply queue instead
// (not BFC's assignment, nor its pause counting), as HPCC's ns-3 lets its
// ACK queue past the switch's MMU accounting; the shared buffer still
// admits it, and PFC's account step skips it. (Where the class map
// chooses, the metadata's queue is already the reply queue.)
struct Worker::ReplyQueue {
  uint16_t choose(Worker&, PortRuntime& out, rte_mbuf*, const MbufMeta&, uint64_t) {
    return out.reply_queue;
  }
  void on_enqueued(Worker&, PortRuntime&, uint16_t, uint32_t, uint64_t) {}
};

void Worker::admit(rte_mbuf* m, uint64_t now) {
  const MbufMeta meta = mbuf_meta_get(m);
  admit(*ports_[meta.egress_port], m, meta, now);
}

void Worker::admit(PortRuntime& out, rte_mbuf* m, const MbufMeta& meta, uint64_t now) {
  admit_data(out, m, meta, now);
}

// admit(), inlined where a burst is admitted (admit_burst); true when the
// packet met the port as cut_through() allows (it cut through, or the
// buffer refused it there).
inline bool Worker::admit_data(PortRuntime& out, rte_mbuf* m, const MbufMeta& meta, uint64_t now) {
  // A packet another lcore's refuse step sent to this port (a DIBS detour).
  if (meta.detour) [[unlikely]]
    return redirected(out, m, meta, now), false;
  counters(out.index).forwarded_packets.add();
  if (!out.eth_header_ready) return drop_data(out, m, DropReason::kNoNeighbor, false, now), false;
  // 1. Gate.
  bool go = true;
  each_module([&](auto& mod) {
    if constexpr (requires { mod.gate(out, m, meta, now); })
      if (go && out.plan.takes(Step::kGate, module_id(mod))) go = mod.gate(out, m, meta, now);
  });
  if (!go) return false;
  return admit_with<ClassQueues>(out, m, meta, now, false);
}

// A run of packets cut through one port (real time, admit_burst). Once a
// packet of the received burst has cut through (or the buffer refused it
// there), the port's traffic manager holds nothing, the packet's queue is
// unpaused, and passing charged no buffer; while nothing else happens at
// the port, each next packet for that queue finds the port just so. A
// packet that would take the same path (a size the buffer admits, no ECN
// mark possible, the bucket's tokens on a shaped port) then needs only the
// L2 rewrite and its place in the burst the port sends next; the queue's
// and the port's counts for the run are added once, at its end (its
// tokens, per packet). Packet `first` has just
// met `out` so; returns the index of the first packet after it that does
// not fit the run (n: none), which is then handled as any other.
// kDeparts: the port takes steps at a pass (out.plan.pass_steps); the
// run's packets take its depart steps once it ends (depart_run), with
// their metadata in the mbufs where a step reads it (pass_meta; kStored:
// route_packet put it there already). kShaped: the port's shaper runs.
template <bool kStored, bool kDeparts, bool kShaped>
unsigned Worker::cut_run(PortRuntime& out, rte_mbuf** pkts, const ParsedPacket* pps,
                         PortRuntime* const* outs, const MbufMeta* metas, unsigned first,
                         unsigned n, uint64_t now) {
  unsigned i = first + 1;
  // RED from an empty queue draws a coin per packet. The run writes no
  // shim: a port with one (a DIBS switch's with max_detours) passes its
  // packets one at a time.
  if (!out.tm->passes_unmarked() || out.plan.data_shim) return i;
  const uint16_t queue = metas[first].queue;
  const uint64_t limit = out.tm->pass_limit();
  // Kept here, not read from the port per packet: the frames' bytes are
  // written in between, and the compiler must assume they may alias.
  uint8_t header[kEthHeaderLen];
  std::memcpy(header, out.eth_header, kEthHeaderLen);
  unsigned count = out.tx_pending_count;
  const unsigned start = count;
  uint64_t bytes = 0;
  [[maybe_unused]] const bool store_meta = out.plan.pass_meta;
  for (; i < n; ++i) {
    PortRuntime* const to = outs[i];
    const bool ipv4 = pps[i].kind == PacketKind::kIpv4;
    if (ipv4 && to == nullptr) continue;  // forward dropped it: nothing at the port
    const MbufMeta& meta = metas[i];
    // (Forward never sets meta.detour: only a DIBS refuse step, over a ring.)
    if (!ipv4 || to != &out || meta.queue != queue || count == kBurst) break;
    rte_mbuf* m = pkts[i];
    const uint32_t frame = m->pkt_len - meta.l3_offset + kEthHeaderLen;  // once rewritten
    if (frame > limit) break;
    if constexpr (kShaped)
      if (!out.tm->pass_tokens(frame)) break;
    // write_l2 without the shim: VLAN tags go, the port's header goes on.
    if (meta.l3_offset != kEthHeaderLen) [[unlikely]]
      rte_pktmbuf_adj(m, static_cast<uint16_t>(meta.l3_offset - kEthHeaderLen));
    std::memcpy(rte_pktmbuf_mtod(m, uint8_t*), header, kEthHeaderLen);
    if constexpr (kDeparts && !kStored)
      if (store_meta) mbuf_meta_set(m, meta);
    out.tx_pending[count++] = m;
    bytes += frame;
  }
  const unsigned packets = count - start;
  if (packets != 0) {
    if constexpr (kDeparts) depart_run(out, start, count, queue, now);
    out.tx_pending_count = count;
    out.tx_cut = static_cast<uint8_t>(out.tx_cut + packets);
    out.tm->pass_run(queue, packets, bytes);
    counters(out.index).forwarded_packets.add(packets);
  }
  return i;
}

// A run as cut_run's through a port whose queue a module chooses at the
// pass (kChoiceAtPass: BFC's flow table). Each packet's queue is the
// module's choice, so it may differ from the last packet's, and must be
// unpaused; the choice takes each packet's enqueue and departure at once
// (Queues::passed), in order; the L2 rewrite writes the shim where the
// plan has one (it carries the queue). What each packet leaves is what it
// would leave passing alone: the run only skips the tests whose answer the
// first pass fixed for the instant. A port with other steps at the pass
// takes its packets one at a time.
template <class Choice, bool kShaped>
unsigned Worker::choice_run(PortRuntime& out, rte_mbuf** pkts, const ParsedPacket* pps,
                            PortRuntime* const* outs, const MbufMeta* metas, unsigned first,
                            unsigned n, uint64_t now) {
  unsigned i = first + 1;
  if (!out.tm->passes_unmarked() || out.plan.pass_steps || out.plan.shim_detours) return i;
  const uint64_t limit = out.tm->pass_limit();
  // write_l2's header, and shim but for its queue, the same for every
  // packet of the run: built once (kept here, not read from the port per
  // packet, as cut_run's header).
  const uint32_t l3 = data_l3_offset(out);
  const bool shim = out.plan.data_shim;
  uint8_t head[kEthHeaderLen + kSluiceShimLen];
  std::memcpy(head, out.eth_header, kEthHeaderLen);
  if (shim) {
    store_be16(head + kEthHeaderLen - 2, kEtherTypeSluiceData);
    write_shim(head + kEthHeaderLen, DataShim{0, shard(out.switch_index), 0, kEtherTypeIpv4});
  }
  // The first pass's sums, published before the run's own, queue by queue
  // in the order the packets passed (the scheduler's turn follows them).
  out.tm->pass_publish();
  unsigned count = out.tx_pending_count;
  const unsigned start = count;
  for (; i < n; ++i) {
    PortRuntime* const to = outs[i];
    const bool ipv4 = pps[i].kind == PacketKind::kIpv4;
    if (ipv4 && to == nullptr) continue;  // forward dropped it: nothing at the port
    const MbufMeta& meta = metas[i];
    // A reply takes the reply queue, not the module's (admit_with).
    if (!ipv4 || to != &out || count == kBurst || meta.queue == out.reply_queue) break;
    rte_mbuf* m = pkts[i];
    const uint32_t bytes = m->pkt_len - meta.l3_offset + l3;  // once rewritten
    if (bytes > limit) break;
    Choice queues;
    const uint16_t q = queues.choose(*this, out, m, meta, now);  // changes nothing yet
    if (!out.tm->run_unpaused(q)) break;
    if constexpr (kShaped)
      if (!out.tm->pass_tokens(bytes)) break;
    place_l3(m, meta.l3_offset, l3);
    uint8_t* eth = rte_pktmbuf_mtod(m, uint8_t*);
    if (shim) {
      std::memcpy(eth, head, kEthHeaderLen + kSluiceShimLen);
      store_be16(eth + kEthHeaderLen, q);  // DataShim::upstream_queue
    } else {
      std::memcpy(eth, head, kEthHeaderLen);
    }
    out.tm->pass_each(q, bytes);
    queues.passed(*this, out, q, bytes, now);
    out.tx_pending[count++] = m;
  }
  const unsigned packets = count - start;
  if (packets != 0) {
    out.tx_pending_count = count;
    out.tx_cut = static_cast<uint8_t>(out.tx_cut + packets);
    out.tm->pass_residences(packets);
    counters(out.index).forwarded_packets.add(packets);
  }
  return i;
}

// choice_run for the module that chose the port's queue, and its shaper.
unsigned Worker::choice_run_from(PortRuntime& out, rte_mbuf** pkts, const ParsedPacket* pps,
                                 PortRuntime* const* outs, const MbufMeta* metas, unsigned first,
                                 unsigned n, uint64_t now) {
  unsigned next = first + 1;
  each_module([&](auto& mod) {
    using M = std::decay_t<decltype(mod)>;
    if constexpr (requires { M::kChoiceAtPass; })
      if constexpr (M::kChoiceAtPass)
        if (out.plan.queue_choice == M::kId)
          next = out.tm->shaped() ? choice_run<typename M::QueueChoice, true>(out, pkts, pps, outs,
                                                                              metas, first, n, now)
                                  : choice_run<typename M::QueueChoice, false>(
                                        out, pkts, pps, outs, metas, first, n, now);
  });
  return next;
}

// cut_run (or choice_run) for the port's plan and shaper.
template <bool kStored>
inline unsigned Worker::run_from(PortRuntime& out, rte_mbuf** pkts, const ParsedPacket* pps,
                                 PortRuntime* const* outs, const MbufMeta* metas, unsigned first,
                                 unsigned n, uint64_t now) {
  if (out.plan.queue_choice != kClassQueues) [[unlikely]]
    return choice_run_from(out, pkts, pps, outs, metas, first, n, now);
  if (out.tm->shaped()) [[unlikely]]
    return out.plan.pass_steps
               ? cut_run<kStored, true, true>(out, pkts, pps, outs, metas, first, n, now)
               : cut_run<kStored, false, true>(out, pkts, pps, outs, metas, first, n, now);
  return out.plan.pass_steps
             ? cut_run<kStored, true, false>(out, pkts, pps, outs, metas, first, n, now)
             : cut_run<kStored, false, false>(out, pkts, pps, outs, metas, first, n, now);
}

// The burst forward_burst routed, in the order received: each routed packet
// admitted here or handed to its egress port's lcore; a packet that is not
// IPv4 handled as poll_port would (it may change what a later packet's
// admission sees: an ARP reply makes a neighbour known, a PAUSE holds a
// queue). Packets that follow one cut through to the same port go as a run.
// kStored: route_packet put the metadata into the mbufs already.
template <bool kStored>
void Worker::admit_burst(PortRuntime& in, rte_mbuf** pkts, const ParsedPacket* pps,
                         PortRuntime* const* outs, const MbufMeta* metas, unsigned n,
                         uint64_t now) {
  for (unsigned i = 0; i < n; ++i) {
    PortRuntime* out = outs[i];
    if (pps[i].kind != PacketKind::kIpv4) {
      handle_parsed(in, pkts[i], pps[i], now);
    } else if (out != nullptr) {
      // For what reads it from the mbuf: the owner across the ring, or a
      // module's later step while the packet is queued.
      if constexpr (!kStored) mbuf_meta_set(pkts[i], metas[i]);
      if (out->owner_slot != w_.slot) {
        stage_remote(out->owner_slot, pkts[i], now);
      } else if (admit_data(*out, pkts[i], metas[i], now)) {
        i = run_from<kStored>(*out, pkts, pps, outs, metas, i, n, now) - 1;  // on after the run
      }
    }
  }
}
template void Worker::admit_burst<false>(PortRuntime&, rte_mbuf**, const ParsedPacket*,
                                         PortRuntime* const*, const MbufMeta*, unsigned, uint64_t);
template void Worker::admit_burst<true>(PortRuntime&, rte_mbuf**, const ParsedPacket*,
                                        PortRuntime* const*, const MbufMeta*, unsigned, uint64_t);

// A gate step released a packet it held: steps 2 to 4. It was admitted to
// the buffer when it was held; only the queue's ring can refuse it now.
void Worker::admit_released(PortRuntime& out, rte_mbuf* m, uint64_t now) {
  admit_chosen<ClassQueues>(out, m, mbuf_meta_get(m), now, true);
}

// A port that queues by flow: the traffic manager chooses the flow's queue
// from the 64-bit flow hash forward kept. A pFabric port also reads the
// rank the sending host wrote into the frame (a frame without one ranks
// last), and frees what its admission evicted.
struct Worker::FlowQueuesChoice {
  uint16_t choose(Worker&, PortRuntime&, rte_mbuf*, const MbufMeta&, uint64_t) { return 0; }
  EnqueueResult enqueue(Worker& w, PortRuntime& out, rte_mbuf* m, const TmPacket& tp,
                        const MbufMeta& meta, uint64_t now) {
    const MbufExtra* x = mbuf_extra(m);
    const uint64_t flow = uint64_t{x->flow.hi} << 32 | x->flow.lo;
    if (!out.tm->ranked()) return out.tm->enqueue_flow(now, flow, tp, meta.ecn_capable);
    const uint32_t l3 = data_l3_offset(out);
    uint32_t rank = kSltNoRank;
    if (m->data_len > l3)
      slt_rank(rte_pktmbuf_mtod(m, const uint8_t*) + l3, m->data_len - l3, &rank);
    TmPacket* const evicted = w.evicted_;
    unsigned n = 0;
    const EnqueueResult r = out.tm->enqueue_ranked(now, flow, rank, tp, evicted, kMaxEvicted, &n);
    for (unsigned i = 0; i < n; ++i)
      w.dequeue_dropped(out, evicted[i], DropReason::kPriorityDrop, now);
    return r;
  }
  static constexpr unsigned kMaxEvicted = Worker::kMaxEvicted;
  void on_enqueued(Worker&, PortRuntime&, uint16_t, uint32_t, uint64_t) {}
};

// Real time, a port whose plan cuts through (StagePlan::cuts_through), on
// a device: a packet that finds the traffic manager empty, its queue
// unpaused and the shaper off or holding tokens (EgressPort::can_cut) is
// what the next dequeue would send first, so it joins the burst the port
// sends next (tx_pending) at once, with its queue's admission, ECN
// decision, counts and tokens (EgressPort::cut_summed; transmit()
// publishes the counts before it sends) and the modules' schedule and
// depart steps (depart_run); a module that chose the queue takes its
// enqueue and departure at once (Queues::passed). That holds while the
// burst has only such packets and room; a send the device did not take
// whole ends it. True when it went (or was refused); false: the caller
// queues it.
template <class Queues>
inline bool Worker::cut_through(Queues& queues, PortRuntime& out, rte_mbuf* m, const TmPacket& tp,
                                const MbufMeta& meta, uint16_t q, uint8_t* ip, uint64_t now) {
  if (out.kind != PortKind::kEthdev || out.tx_pending_count != out.tx_cut || out.tx_cut == kBurst ||
      !out.tm->can_cut(now, q))
    return false;
  const EnqueueResult r = out.tm->cut_summed(q, tp.bytes, meta.ecn_capable);
  if (r.verdict == EnqueueVerdict::kDropped) {
    refuse(out, m, r.reason, now);
    return true;
  }
  if (r.verdict == EnqueueVerdict::kEnqueuedMarked) mark_ce(counters(out.index), ip);
  if constexpr (requires { queues.passed(*this, out, q, tp.bytes, now); })
    queues.passed(*this, out, q, tp.bytes, now);
  out.tx_pending[out.tx_pending_count++] = m;
  ++out.tx_cut;
  if (out.plan.pass_steps) [[unlikely]] {
    schedule_steps(out, now);
    depart_run(out, out.tx_pending_count - 1, out.tx_pending_count, q, now);
  }
  return true;
}

// The departure of tx_pending[from, to), packets that cut through `out`
// from queue q (their metadata in the mbufs), as depart() gives packets
// the traffic manager dequeued, but module by module: only modules whose
// steps may run at a pass take one here (StagePlan::cuts_through), none a
// release step, and none reads another's state. A module that chose the
// queue took its departure with its choice (Queues::passed). The run's
// TmPackets are built once, in passing_ (no such step admits a packet, so
// nothing comes back here while they are in use); a module with a
// depart_run step takes them at once.
void Worker::depart_run(PortRuntime& out, unsigned from, unsigned to, uint16_t q, uint64_t now) {
  TmPacket* const run = passing_;
  for (unsigned i = from; i < to; ++i) {
    TmPacket& p = run[i - from];
    p.handle = out.tx_pending[i];
    p.bytes = out.tx_pending[i]->pkt_len;
    p.queue = q;
    p.enqueue_ns = now;
  }
  each_module([&](auto& mod) {
    if constexpr (requires { mod.depart(out, TmPacket{}, now); })
      if (out.plan.takes(Step::kDepart, module_id(mod)) &&
          module_id(mod) != out.plan.queue_choice) {
        if constexpr (requires { mod.depart_run(out, run, to - from, now); }) {
          mod.depart_run(out, run, to - from, now);
        } else {
          for (unsigned i = 0; i < to - from; ++i) mod.depart(out, run[i], now);
        }
      }
  });
}

// Steps 2 to 4 with the port's queue choice: a module's, where the plan
// names one, queueing by flow, else Queues (the class map's). True as
// admit_data.
template <class Queues>
inline bool Worker::admit_with(PortRuntime& out, rte_mbuf* m, const MbufMeta& meta, uint64_t now,
                               bool held) {
  if (out.plan.queue_choice != kClassQueues) {
    if (meta.queue == out.reply_queue) [[unlikely]]
      return admit_reply(out, m, meta, now, held), false;
    bool done = false;
    bool cut = false;
    each_module([&](auto& mod) {
      using M = std::decay_t<decltype(mod)>;
      if constexpr (requires { typename M::QueueChoice; })
        if (!done && out.plan.queue_choice == M::kId) {
          cut = admit_by_module<typename M::QueueChoice>(out, m, meta, now, held);
          done = true;
        }
    });
    if (done) return cut;
    // After the modules': a BFC port pays no extra test.
    if (out.plan.queue_choice == kFlowQueues) return admit_by_flow(out, m, meta, now, held), false;
  }
  return admit_chosen<Queues>(out, m, meta, now, held);
}

// Out of line, as admit_by_flow: a module's queue choice (BFC's) would make
// admit_with too large to inline where ports queue by class.
template <class Choice>
bool Worker::admit_by_module(PortRuntime& out, rte_mbuf* m, const MbufMeta& meta, uint64_t now,
                             bool held) {
  return admit_chosen<Choice>(out, m, meta, now, held);
}

// Out of line, as admit_by_flow.
void Worker::admit_reply(PortRuntime& out, rte_mbuf* m, const MbufMeta& meta, uint64_t now,
                         bool held) {
  admit_chosen<ReplyQueue>(out, m, meta, now, held);
}

// Out of line, so that admit_with stays small enough to inline where ports
// queue by class.
void Worker::admit_by_flow(PortRuntime& out, rte_mbuf* m, const MbufMeta& meta, uint64_t now,
                           bool held) {
  admit_chosen<FlowQueuesChoice>(out, m, meta, now, held);
}

// Steps 2 to 4; Queues is the queue choice. held: the packet's bytes are
// in the buffer already (a gate released it). True as admit_data.
template <class Queues>
inline bool Worker::admit_chosen(PortRuntime& out, rte_mbuf* m, const MbufMeta& meta, uint64_t now,
                                 bool held) {
  Queues queues;
  const uint16_t q = queues.choose(*this, out, m, meta, now);
  uint8_t* ip = write_l2(out, m, meta, q);
  TmPacket tp;
  tp.handle = m;
  tp.bytes = m->pkt_len;
  each_module([&](auto& mod) {
    if constexpr (requires { mod.before_enqueue(out, m, tp); })
      if (out.plan.takes(Step::kAccount, module_id(mod))) mod.before_enqueue(out, m, tp);
  });
  EnqueueResult r;
  if constexpr (requires { queues.enqueue(*this, out, m, tp, meta, now); }) {
    r = queues.enqueue(*this, out, m, tp, meta, now);
  } else {
    if (!held) {
      if (fabric_ != nullptr) [[unlikely]] {
        if (out.plan.straight() && pass_straight(out, m, tp, meta, q, ip, now)) return false;
      } else if (out.plan.cuts_through && cut_through(queues, out, m, tp, meta, q, ip, now)) {
        return true;
      }
    }
    r = held ? out.tm->enqueue_held(now, q, tp, meta.ecn_capable)
             : out.tm->enqueue(now, q, tp, meta.ecn_capable);
  }
  if (r.verdict == EnqueueVerdict::kDropped) return refuse(out, m, r.reason, now), false;
  each_module([&](auto& mod) {
    if constexpr (requires { mod.account(out, m, meta, tp, now); })
      if (out.plan.takes(Step::kAccount, module_id(mod))) mod.account(out, m, meta, tp, now);
  });
  queues.on_enqueued(*this, out, q, tp.bytes, now);
  if (r.verdict == EnqueueVerdict::kEnqueuedMarked) mark_ce(counters(out.index), ip);
  admitted(out, now);
  return false;
}

// Exact time, a port where no module takes a step (so the class map chose
// the queue, and no account step or queue choice's own follows): when the
// port is idle and its wire free (sends_at_once: in exact time the wire's
// room is that, or a shaped port's bucket ready), what the queue would
// take and give back at once goes
// straight to the wire. True when it went (or was refused); false: the
// caller queues it.
bool Worker::pass_straight(PortRuntime& out, rte_mbuf* m, const TmPacket& tp, const MbufMeta& meta,
                           uint16_t q, uint8_t* ip, uint64_t now) {
  if (!fabric_->sends_at_once(out, now) || !out.tm->can_cut(now, q)) return false;
  const EnqueueResult r = out.tm->pass(q, tp, meta.ecn_capable);
  if (r.verdict == EnqueueVerdict::kDropped) {
    refuse(out, m, r.reason, now);
    return true;
  }
  // As the schedule step records a shaped port's frame: it left when both
  // it and the bucket were ready.
  if (out.tm->shaped()) out.shaper_lateness.record(0);
  if (r.verdict == EnqueueVerdict::kEnqueuedMarked) mark_ce(counters(out.index), ip);
  fabric_->passed(out, m, now);
  return true;
}

// Buffer admission refused the packet: a module's refuse step takes it
// (DIBS detours it to another switch-facing port that admits it);
// otherwise it is dropped and counted under the traffic manager's reason.
void Worker::refuse(PortRuntime& out, rte_mbuf* m, DropReason why, uint64_t now) {
  bool taken = false;
  each_module([&](auto& mod) {
    if constexpr (requires { mod.refuse(out, m, why, now); })
      if (!taken && out.plan.takes(Step::kRefuse, module_id(mod))) {
        mod.refuse(out, m, why, now);
        taken = true;
      }
  });
  if (taken) return;
  drop_data(out, m, why, out.plan.steps[static_cast<unsigned>(Step::kGate)] != 0, now);
}

// A packet another lcore's refuse step chose this port for: that module
// admits it here.
void Worker::redirected(PortRuntime& out, rte_mbuf* m, const MbufMeta& meta, uint64_t now) {
  bool taken = false;
  each_module([&](auto& mod) {
    if constexpr (requires { mod.redirected(out, m, meta, now); })
      if (!taken && out.plan.takes(Step::kRefuse, module_id(mod))) {
        mod.redirected(out, m, meta, now);
        taken = true;
      }
  });
  if (!taken) drop_data(out, m, DropReason::kNoRoute, false, now);
}

void Worker::drop_data(PortRuntime& out, rte_mbuf* m, DropReason why, bool gated, uint64_t now) {
  each_module([&](auto& mod) {
    if constexpr (requires { mod.dropped(out, m, gated, now); })
      if (out.plan.takes(Step::kDropped, module_id(mod))) mod.dropped(out, m, gated, now);
  });
  drop(out.index, m, why);
}

void Worker::hold(PortRuntime& out, rte_mbuf* m, const MbufMeta& meta) {
  each_module([&](auto& mod) {
    if constexpr (requires { mod.hold(out, m, meta); })
      if (out.plan.takes(Step::kAccount, module_id(mod))) mod.hold(out, m, meta);
  });
}

void Worker::unhold(PortRuntime& out, rte_mbuf* m) {
  each_module([&](auto& mod) {
    if constexpr (requires { mod.unhold(out, m); })
      if (out.plan.takes(Step::kAccount, module_id(mod))) mod.unhold(out, m);
  });
}

void Worker::mark_ce(PortCounters& c, uint8_t* ip) {
  if (ipv4_ecn(ip) != kEcnCe) ipv4_set_ecn(ip, kEcnCe);
  c.ecn_marks.add();
}

}  // namespace sluice
