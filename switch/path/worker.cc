#include "switch/path/worker.h"

#include <rte_cycles.h>
#include <rte_ethdev.h>
#include <rte_lcore.h>
#include <rte_prefetch.h>
#include <rte_ring.h>
#include <sched.h>
#include <sys/resource.h>

#include <algorithm>
#include <bit>
#include <cstring>

#include "lib/net/arp.h"
#include "lib/net/ethertypes.h"
#include "switch/emulator/fabric_loop.h"
#include "switch/path/mbuf_meta.h"

namespace sluice {
namespace {

constexpr uint64_t kArpRetryNs = 1'000'000'000;
constexpr unsigned kIdleSpinsBeforeYield = 256;
constexpr unsigned kTimerEveryIterations = 1024;
// The fidelity target's lateness bucket (docs/testbed.md): a busy pass
// longer than this makes the frames due during it late beyond the target.
constexpr uint64_t kFidelityTargetNs = 25'600;

// Headers are read from the first segment only. A chained (jumbo) frame is
// judged by its whole length, which is safe while every header the parser may
// read (at most 14 + 2x4 VLAN + 6 shim + 60 IP + 4 ports = 92 bytes) lies in
// the first segment; otherwise only the first segment counts, and a header
// that spans segments is reported truncated.
constexpr uint32_t kMaxParsedHeaderBytes = 92;

uint32_t parse_length(const rte_mbuf* m) {
  return m->nb_segs == 1 || m->data_len >= kMaxParsedHeaderBytes ? m->pkt_len : m->data_len;
}

std::vector<PortRuntime*> collect_ports(const Runtime& rt) {
  std::vector<PortRuntime*> out;
  for (const auto& p : rt.ports) out.push_back(p.get());
  return out;
}

}  // namespace

Worker::Worker(Runtime& rt, WorkerRuntime& w)
    : rt_(rt),
      w_(w),
      clock_(rt.tsc_hz),
      ports_(collect_ports(rt)),
      modules_(*this),
      staged_(rt.workers.size()) {
  if (exact_time(rt)) fabric_ = std::make_unique<FabricLoop>(*this);
  control_ring_ = w.control_in != nullptr;
  forward_steps_ = forward_step_modules();
  per_packet_steps_ = per_packet_forward_modules();
  // Yielding hands the core to whatever else is runnable on it, for a whole
  // scheduler slice: only worth it when it is another lcore of ours.
  const unsigned cpu = rte_lcore_to_cpu_id(static_cast<int>(w.lcore));
  unsigned lcore;
  RTE_LCORE_FOREACH(lcore) {
    if (lcore != w.lcore &&
        static_cast<unsigned>(rte_lcore_to_cpu_id(static_cast<int>(lcore))) == cpu)
      yield_when_idle_ = true;
  }
}

Worker::~Worker() = default;

int worker_main(void* arg) {
  static_cast<Worker*>(arg)->run();
  return 0;
}

namespace {

struct ThreadUsage {
  uint64_t minflt, majflt, nivcsw, nvcsw;
};

ThreadUsage thread_usage() {
  rusage u{};
  getrusage(RUSAGE_THREAD, &u);
  return {uint64_t(u.ru_minflt), uint64_t(u.ru_majflt), uint64_t(u.ru_nivcsw),
          uint64_t(u.ru_nvcsw)};
}

}  // namespace

void Worker::run() {
  const ThreadUsage before = thread_usage();
  if (fabric_) {
    const uint64_t wall_start = clock_.now_ns();
    fabric_->run();
    w_.exact_wall_ns.set(clock_.now_ns() - wall_start);
    w_.finished.store(true);
  } else {
    loop();
  }
  const ThreadUsage after = thread_usage();
  w_.minor_faults.set(after.minflt - before.minflt);
  w_.major_faults.set(after.majflt - before.majflt);
  w_.involuntary_switches.set(after.nivcsw - before.nivcsw);
  w_.voluntary_switches.set(after.nvcsw - before.nvcsw);
}

void Worker::loop() {
  unsigned idle = 0;
  unsigned iteration = 0;
  bool last_busy = false;
  uint64_t last = rte_rdtsc();
  while (!rt_.stop.load(std::memory_order_relaxed)) {
    // Read at the top, so time spent yielding or descheduled between two
    // iterations never leaves `now` stale; the gap between two tops is the
    // loop's period as the ports see it.
    const uint64_t start = rte_rdtsc();
    record_loop_gap(clock_.to_ns(start - last), last_busy);
    last = start;
    const uint64_t now = clock_.to_ns(start);
    const bool busy = iterate(now, ++iteration % kTimerEveryIterations == 0);
    const uint64_t end = rte_rdtsc();
    w_.total_cycles.add(end - start);
    last_busy = busy;
    if (busy) {
      w_.busy_cycles.add(end - start);
      idle = 0;
    } else if (yield_when_idle_ && ++idle >= kIdleSpinsBeforeYield) {
      // Nothing to do: let another lcore sharing this core run.
      sched_yield();
      idle = 0;
    }
  }
  finish(clock_.to_ns(rte_rdtsc()));
}

// The loop ended at end_ns: what modules hold goes on (Flowtune's pacers),
// what is staged for other lcores goes over, the modules settle their
// ports' figures (pause and TCD time).
void Worker::finish(uint64_t end_ns) {
  each_module([&](auto& m) {
    if constexpr (requires { m.finish(end_ns); }) m.finish(end_ns);
  });
  flush_staged(end_ns);
  for (uint16_t p : w_.ports) {
    PortRuntime& port = *ports_[p];
    each_module([&](auto& m) {
      if constexpr (requires { m.finish_port(port, end_ns); }) m.finish_port(port, end_ns);
    });
    port.medium->finish(end_ns);
  }
}

// One pass over this lcore's ports; true if it moved any packet. The
// modules' timers run around it: those that must go before new arrivals
// (paced packets due now leave before their flows' next ones), those after
// the rings, and per port after its transmit and, every few passes, its
// slow timers.
bool Worker::iterate(uint64_t now, bool timers) {
  bool busy = false;
  each_module([&](auto& m) {
    if constexpr (requires { m.before_poll(now); }) busy |= m.before_poll(now);
  });
  for (uint16_t p : w_.ports) busy |= poll_port(*ports_[p], now);
  for (RxShare& share : w_.receive) busy |= poll_port(*ports_[share.port], now, share.medium.get());
  if (staged_.size() > 1) {  // one lcore alone has no ring to fill or drain
    flush_staged(now);
    busy |= drain_rings(now);
  }
  if (control_ring_) busy |= drain_control(now);
  each_module([&](auto& m) {
    if constexpr (requires { m.timers(now); }) busy |= m.timers(now);
  });
  for (uint16_t p : w_.ports) {
    busy |= transmit(*ports_[p], now);
    // A whole burst went: the port may hold more (frames sluice built took
    // data's slots, or a resumed queue), so drain it faster than rx fills.
    if (ports_[p]->tx_burst_full) transmit(*ports_[p], now);
  }
  for (uint16_t p : w_.ports) {
    PortRuntime& port = *ports_[p];
    each_module([&](auto& m) {
      if constexpr (requires { m.after_transmit(port, now); }) m.after_transmit(port, now);
    });
  }
  if (timers) {
    for (uint16_t p : w_.ports) {
      PortRuntime& port = *ports_[p];
      send_arp_requests(port, now);
      each_module([&](auto& m) {
        if constexpr (requires { m.slow_timers(port, now); }) m.slow_timers(port, now);
      });
    }
  }
  return busy;
}

// `ns` is the previous iteration's period; `busy` whether it moved packets.
void Worker::record_loop_gap(uint64_t ns, bool busy) {
  w_.loop_gap.record(ns);
  if (ns > kWatchedGapNs) unwatched_ns_ += ns - kWatchedGapNs;
  w_.iterations.add();
  if (ns > w_.loop_gap_max_ns.get()) w_.loop_gap_max_ns.set(ns);
  if (!busy) w_.idle_loop_ns.add(ns);
  if (busy && ns > kFidelityTargetNs) w_.busy_loop_gaps_over_25us.add();
  if (ns > 50'000) {
    w_.loop_gaps_over_50us.add();
    if (!busy) w_.idle_loop_gaps_over_50us.add();
  }
  if (ns > 200'000) w_.loop_gaps_over_200us.add();
}

unsigned Worker::receive(PortMedium& from, uint64_t now, rte_mbuf** pkts) {
  return from.receive(now, pkts, kBurst);
}

// Hands frames to the port's medium; returns how many it took. dequeued:
// the frames as the traffic manager handed them out, if unchanged since
// (SendNotes).
unsigned Worker::send(PortRuntime& port, uint64_t now, rte_mbuf** pkts, unsigned n,
                      const TmPacket* dequeued) {
  SendNotes notes;
  notes.dequeued = dequeued;
  const unsigned taken = port.medium->send(now, pkts, n, &notes);
  if (notes.lost != 0) counters(port.index).link_lost.add(notes.lost);
  // The far end is due when the first frame arrives.
  if (fabric_ && notes.first_arrival != UINT64_MAX)
    fabric_->link_arrival(notes.far_port, notes.first_arrival, notes.first_frame);
  return taken;
}

bool Worker::poll_port(PortRuntime& port, uint64_t now, PortMedium* share) {
  rte_mbuf* pkts[kBurst];
  const unsigned n = receive(share != nullptr ? *share : *port.medium, now, pkts);
  if (n == 0) return false;
  PortCounters& c = counters(port.index);
  if (n == 1) {  // exact time's usual burst (one frame due at an instant)
    rte_mbuf* m = pkts[0];
    const uint32_t len = m->pkt_len;
    ParsedPacket pp;
    parse_packet(rte_pktmbuf_mtod(m, const uint8_t*), parse_length(m), &pp);
    handle_parsed(port, m, pp, now);
    c.rx_packets.add(1);
    c.rx_bytes.add(len);
    return true;
  }
  uint64_t bytes = 0;
  // The whole burst is parsed before any packet goes on: the parser keeps no
  // state, and a loop of parses alone lets the CPU overlap them (plain
  // forwarding 3.5-5.7 % faster, docs/benchmarks.md).
  ParsedPacket pps[kBurst];
  for (unsigned i = 0; i < n && i < 4; ++i) rte_prefetch0(rte_pktmbuf_mtod(pkts[i], void*));
  for (unsigned i = 0; i < n; ++i) {
    if (i + 4 < n) rte_prefetch0(rte_pktmbuf_mtod(pkts[i + 4], void*));
    bytes += pkts[i]->pkt_len;
    parse_packet(rte_pktmbuf_mtod(pkts[i], const uint8_t*), parse_length(pkts[i]), &pps[i]);
  }
  if ((port.in_steps & forward_steps_) == 0) {
    forward_burst(port, pkts, pps, n, now);
  } else if ((port.in_steps & per_packet_steps_) == 0) {
    forward_segments(port, pkts, pps, n, now);
  } else {
    for (unsigned i = 0; i < n; ++i) handle_parsed(port, pkts[i], pps[i], now);
  }
  c.rx_packets.add(n);
  c.rx_bytes.add(bytes);
  return true;
}

void Worker::handle_parsed(PortRuntime& in, rte_mbuf* m, const ParsedPacket& pp, uint64_t now) {
  // A share of the port (workers[].receive): ARP and control frames change
  // what its owner alone writes (the peer MAC, pauses, credits), so they
  // cross to it, in order with the data this lcore sends there.
  if (in.owner_slot != w_.slot &&
      (pp.kind == PacketKind::kArp || pp.kind == PacketKind::kMacControl ||
       pp.kind == PacketKind::kSluiceControl)) [[unlikely]] {
    mbuf_mark_received(m, in.index);
    return stage_remote(in.owner_slot, m, now);
  }
  switch (pp.kind) {
    case PacketKind::kIpv4:
      forward(in, m, pp, now);
      return;
    case PacketKind::kArp:
      handle_arp(in, m, pp, now);
      return;
    case PacketKind::kIpv6:
      drop(in.index, m, DropReason::kIpv6);
      return;
    case PacketKind::kMacControl:
      handle_mac_control(in, m, pp, now);
      return;
    case PacketKind::kSluiceControl:
      handle_sluice_control(in, m, pp, now);
      return;
    case PacketKind::kDrop:
      drop(in.index, m, pp.drop);
      return;
  }
}

void Worker::to_admission(rte_mbuf* m, uint64_t now) {
  const PortRuntime& out = *ports_[mbuf_meta_get(m).egress_port];
  if (out.owner_slot == w_.slot) {
    admit(m, now);
  } else {
    stage_remote(out.owner_slot, m, now);
  }
}

void Worker::stage_remote(unsigned slot, rte_mbuf* m, uint64_t now) {
  RingBatch& s = staged_[slot];
  s.pkts[s.count++] = m;
  if (s.count == kBurst) flush_staged(now);
}

void Worker::flush_staged(uint64_t now) {
  for (unsigned slot = 0; slot < staged_.size(); ++slot) {
    RingBatch& s = staged_[slot];
    if (s.count == 0) continue;
    const unsigned sent =
        rte_ring_sp_enqueue_burst(w_.to[slot], reinterpret_cast<void**>(s.pkts), s.count, nullptr);
    for (unsigned i = sent; i < s.count; ++i) {
      rte_mbuf* m = s.pkts[i];
      if (mbuf_is_received(m)) [[unlikely]] {
        drop(mbuf_received_port(m), m, DropReason::kRingFull);
        continue;
      }
      drop_data(*ports_[mbuf_meta_get(m).egress_port], m, DropReason::kRingFull, false, now);
    }
    s.count = 0;
  }
}

bool Worker::drain_rings(uint64_t now) {
  bool any = false;
  for (rte_ring* r : w_.from) {
    if (r == nullptr) continue;
    rte_mbuf* pkts[kBurst];
    const unsigned n =
        rte_ring_sc_dequeue_burst(r, reinterpret_cast<void**>(pkts), kBurst, nullptr);
    for (unsigned i = 0; i < n; ++i) {
      if (mbuf_is_received(pkts[i])) [[unlikely]] {
        handle_received(pkts[i], now);
        continue;
      }
      admit(pkts[i], now);
    }
    any |= n > 0;
  }
  return any;
}

// A frame a share of one of this lcore's ports received and handed over:
// handled as if it had arrived here (its receive was counted there).
void Worker::handle_received(rte_mbuf* m, uint64_t now) {
  ParsedPacket pp;
  parse_packet(rte_pktmbuf_mtod(m, const uint8_t*), parse_length(m), &pp);
  handle_parsed(*ports_[mbuf_received_port(m)], m, pp, now);
}

// The port's pending frames go to its medium; what it does not take stays
// pending. dequeued: the pending frames as the traffic manager handed them
// out, if unchanged since (Worker::send).
inline bool Worker::send_pending(PortRuntime& port, uint64_t now, const TmPacket* dequeued) {
  PortCounters& c = counters(port.index);
  const unsigned sent = send(port, now, port.tx_pending, port.tx_pending_count, dequeued);
  port.tx_cut = 0;  // what the device left is no longer the next dequeue's
  if (sent == 0) return true;
  uint64_t bytes = 0;
  if (dequeued != nullptr) {
    for (unsigned i = 0; i < sent; ++i) bytes += dequeued[i].bytes;
  } else {
    for (unsigned i = 0; i < sent; ++i) bytes += port.tx_pending[i]->pkt_len;
  }
  c.tx_packets.add(sent);
  c.tx_bytes.add(bytes);
  if (port.first_tx_ns.load(std::memory_order_relaxed) == 0) port.first_tx_ns.store(now);
  port.last_tx_ns.store(now, std::memory_order_relaxed);
  port.tx_pending_count -= sent;
  if (port.tx_pending_count > 0) {
    port.tx_burst_full = false;
    std::memmove(port.tx_pending, port.tx_pending + sent,
                 port.tx_pending_count * sizeof(rte_mbuf*));
  }
  return true;
}

// Schedule, then departure, then the port sends. A burst the port did not
// take whole stays pending (already departed) for the next call.
bool Worker::transmit(PortRuntime& port, uint64_t now) {
  schedule_steps(port, now);
  port.tx_burst_full = false;
  // Real time, a device with nothing to send: its medium does nothing at a
  // transmit, and the traffic manager nothing at a dequeue it has nothing
  // for, so each pass over an idle port stops here.
  if (port.kind == PortKind::kEthdev && port.tx_pending_count == 0 && port.tm->holds_nothing())
    return false;
  port.medium->begin_transmit(now, fabric_ != nullptr, *port.tm);
  bool sent_cut = false;
  if (port.tx_cut != 0) {
    // What admission cut through (all of tx_pending) leaves first; once
    // the device took it, what the traffic manager queued behind it.
    port.tm->pass_publish();
    send_pending(port, now);
    if (port.tx_pending_count != 0) return true;
    sent_cut = true;
  }
  if (port.tx_pending_count == 0) {
    const unsigned n = schedule(port, now);
    if (n == 0) return sent_cut;
    if (port.plan.departure) depart(port, dequeued_, n, now);  // may rewrite the frames
    port.tx_pending_count = n;
    port.tx_burst_full = n == kBurst;
    // Unless a departure step rewrote them, the frames are as the traffic
    // manager handed them out, with their lengths: a link's sender need
    // not read them (SendNotes).
    if (!port.plan.departure) return send_pending(port, now, dequeued_);
  }
  return send_pending(port, now);
}

void Worker::transmit_passed(PortRuntime& port, rte_mbuf* m, uint64_t now) {
  schedule_steps(port, now);
  port.medium->begin_transmit(now, true, *port.tm);
  port.tx_burst_full = false;
  port.tx_pending[0] = m;
  port.tx_pending_count = 1;
  send_pending(port, now);
}

// Schedule: up to a burst the port can take now, from the traffic manager
// (control first, then the scheduler's choice among unpaused data queues,
// within the shaper; residence is recorded there), into dequeued_ and
// tx_pending. Returns how many.
unsigned Worker::schedule(PortRuntime& port, uint64_t now) {
  const unsigned room = port.medium->room(now, fabric_ != nullptr);
  if (room == 0) return 0;
  TmPacket* out = dequeued_;
  const uint64_t ready_ns = port.tm->shaper().next_ready_ns();
  const unsigned n = port.tm->dequeue_burst(now, out, room);
  if (port.tm->queues_by_flow()) [[unlikely]]
    flow_dequeue_results(port, out, now);
  if (fabric_ == nullptr) port.medium->scheduled(now, *port.tm);  // real time's catch-up
  if (n == 0) return 0;
  if (!port.tm->shaper().unlimited()) {
    // Fidelity: the first frame should have left when both it and the
    // shaper were ready; anything later is the loop's lateness.
    const uint64_t ideal = std::max(ready_ns, out[0].enqueue_ns);
    port.shaper_lateness.record(now > ideal ? now - ideal : 0);
  }
  unsigned generated = 0;
  for (unsigned i = 0; i < n; ++i) {
    port.tx_pending[i] = static_cast<rte_mbuf*>(out[i].handle);
    generated += (out[i].aux & kTmAuxGenerated) != 0;
  }
  if (generated != 0) counters(port.index).tx_generated_packets.add(generated);
  return n;
}

// A packet the traffic manager had queued and then dropped (CoDel at
// dequeue, pFabric's eviction): it was admitted, so counted at its ingress
// (PFC), and its release step gives that back, as its departure would have.
void Worker::dequeue_dropped(PortRuntime& port, const TmPacket& p, DropReason why, uint64_t now) {
  each_module([&](auto& mod) {
    if constexpr (requires { mod.release(port, p, now); })
      if (port.plan.takes(Step::kRelease, module_id(mod))) mod.release(port, p, now);
  });
  drop(port.index, static_cast<rte_mbuf*>(p.handle), why);
}

void Worker::flow_dequeue_results(PortRuntime& port, const TmPacket* out, uint64_t now) {
  const TmPacket* dropped;
  const unsigned d = port.tm->dequeue_dropped(&dropped);
  for (unsigned i = 0; i < d; ++i) dequeue_dropped(port, dropped[i], DropReason::kCodel, now);
  for (uint64_t marks = port.tm->dequeue_marks(); marks != 0; marks &= marks - 1) {
    rte_mbuf* m = static_cast<rte_mbuf*>(out[std::countr_zero(marks)].handle);
    mark_ce(counters(port.index), rte_pktmbuf_mtod(m, uint8_t*) + data_l3_offset(port));
  }
}

void Worker::handle_arp(PortRuntime& in, rte_mbuf* m, const ParsedPacket& pp, uint64_t now) {
  ArpMessage a;
  const uint8_t* l3 = rte_pktmbuf_mtod(m, const uint8_t*) + pp.l3_offset;
  if (!parse_arp(l3, m->data_len - pp.l3_offset, &a)) return drop(in.index, m, DropReason::kBadArp);
  const PortConfig& pc = *in.cfg;
  const bool from_peer = !pc.peer_ipv4 || a.spa == *pc.peer_ipv4;
  if (!pc.peer_mac && from_peer && a.spa != 0) {
    set_peer_mac(in, a.sha);
    touch_misc(in.index);  // no more ARP requests due
  }
  counters(in.index).rx_consumed_packets.add();
  const bool for_us = pc.ipv4 && a.tpa == pc.ipv4->addr;
  if (a.op == kArpOpRequest && for_us) {
    // Reuse the request's mbuf for the reply.
    rte_pktmbuf_reset(m);
    uint8_t* frame = reinterpret_cast<uint8_t*>(rte_pktmbuf_append(m, kEthMinFrameLen));
    const uint32_t len = frame ? build_arp_frame(frame, kEthMinFrameLen, kArpOpReply, in.mac, a.sha,
                                                 pc.ipv4->addr, a.sha, a.spa)
                               : 0;
    if (len == 0) {
      rte_pktmbuf_free(m);
      return;
    }
    send_control(in, now, m);
    return;
  }
  rte_pktmbuf_free(m);
}

// An mbuf holding `len` bytes for a frame sluice builds, or nullptr when the
// pool is empty.
rte_mbuf* Worker::new_frame(uint32_t len, uint8_t** data) {
  rte_mbuf* m = rt_.mbufs->alloc();
  if (m == nullptr) return nullptr;
  *data = reinterpret_cast<uint8_t*>(rte_pktmbuf_append(m, static_cast<uint16_t>(len)));
  if (*data == nullptr) {
    rte_pktmbuf_free(m);
    return nullptr;
  }
  return m;
}

// A frame sluice built goes out ahead of data. If the control queue is full
// it is freed and false returned: the traffic manager counts it
// (control_dropped); it is not a drop of a received packet.
bool Worker::send_control(PortRuntime& port, uint64_t now, rte_mbuf* m) {
  TmPacket tp;
  tp.handle = m;
  tp.bytes = m->pkt_len;
  tp.aux = kTmAuxGenerated;
  if (port.tm->enqueue_control(now, tp)) {
    touch(port.index);
    return true;
  }
  rte_pktmbuf_free(m);
  return false;
}

// Asks for the peer's MAC while it is unknown and its address is configured.
void Worker::send_arp_requests(PortRuntime& port, uint64_t now) {
  const PortConfig& pc = *port.cfg;
  if (!pc.peer_ipv4 || !pc.ipv4 || now < port.next_arp_request_ns) return;
  if (port.eth_header_ready) return;
  port.next_arp_request_ns = now + kArpRetryNs;
  uint8_t* frame;
  rte_mbuf* m = new_frame(kEthMinFrameLen, &frame);
  if (m == nullptr) return;
  if (build_arp_frame(frame, kEthMinFrameLen, kArpOpRequest, port.mac, kBroadcastMac, pc.ipv4->addr,
                      kZeroMac, *pc.peer_ipv4) == 0) {
    rte_pktmbuf_free(m);
    return;
  }
  send_control(port, now, m);
}

// A frame of `len` bytes (the Ethernet minimum unless given) for the
// port's peer, with *dst its MAC; nullptr, counted in control_lost, when
// the peer MAC is not known yet or the pool is empty (each mechanism
// repairs that: BFC with its next bitmap, Floodgate by keeping the credit).
rte_mbuf* Worker::new_frame_to_peer(PortRuntime& port, uint8_t** frame, MacAddr* dst,
                                    uint32_t len) {
  const uint64_t peer = port.peer_mac.load(std::memory_order_relaxed);
  rte_mbuf* m = (peer >> 48) != 0 ? new_frame(len, frame) : nullptr;
  if (m == nullptr) {
    counters(port.index).control_lost.add();
    return nullptr;
  }
  *dst = unpack_mac(peer);
  return m;
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
  for (unsigned i = 0; i < n; ++i) {
    PortRuntime& port = *ports_[mbuf_meta_get(pkts[i]).egress_port];
    // A module may account for its frames as they pass to their port.
    each_module([&](auto& m) {
      if constexpr (requires { m.control_passing(port, pkts[i], now); })
        m.control_passing(port, pkts[i], now);
    });
    send_control(port, now, pkts[i]);
  }
  return n > 0;
}

void Worker::drop(uint16_t port, rte_mbuf* m, DropReason why) {
  counters(port).drop(why);
  rte_pktmbuf_free(m);
}

}  // namespace sluice
