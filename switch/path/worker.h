#pragma once
// One worker lcore's run-to-completion loop: receive on owned ports, parse,
// then take each packet through the stages of its path (ingress control or
// forward; admission, directly or over the ring to the lcore that owns the
// egress port; schedule; departure) and transmit what the traffic managers
// release. The modules of the registry (switch/mechanisms/registry.h) plug
// into the stages; the worker knows none of them by name. In exact fabric
// time the loop is the emulator's (switch/emulator/fabric_loop.h).

#include <rte_mbuf.h>

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <memory>
#include <tuple>

#include "lib/control/control_frame.h"
#include "lib/control/data_shim.h"
#include "lib/emulator/event_calendar.h"
#include "lib/net/ethertypes.h"
#include "lib/net/packet_parser.h"
#include "switch/emulator/fabric_loop.h"
#include "switch/mechanisms/registry.h"
#include "switch/path/mbuf_meta.h"
#include "switch/runtime/runtime.h"

namespace sluice {

class Worker {
 public:
  Worker(Runtime& rt, WorkerRuntime& w);
  ~Worker();
  // Runs until rt.stop is set (real time) or the fabric's end (exact time).
  void run();

  // ---- What modules use (switch/path/module.h). ----
  Runtime& rt() { return rt_; }
  const Runtime& rt() const { return rt_; }
  WorkerRuntime& lcore() { return w_; }
  unsigned slot() const { return w_.slot; }
  // This lcore's shard of switch `sw` (SwitchRuntime::shard_of_slot).
  uint8_t shard(uint16_t sw) const { return rt_.switches[sw].shard_of_slot[w_.slot]; }
  PortRuntime& port(uint16_t i) { return *ports_[i]; }
  PortCounters& counters(uint16_t port) { return w_.counters[port]; }
  // Each module's part on this lcore.
  template <class M>
  M& module() {
    return std::get<M>(modules_.all);
  }
  // Exact fabric time (nullptr in real time).
  FabricLoop* fabric() { return fabric_.get(); }

  // Frames sluice builds: an mbuf holding `len` bytes (nullptr when the
  // pool is empty); one for the port's peer, with *dst its MAC (nullptr,
  // counted in control_lost, when the peer MAC is not known yet or the pool
  // is empty); queued ahead of data on a port this lcore owns (false, and
  // freed, when the control queue is full); or sent from any lcore, over the
  // owner's control ring when it is another.
  rte_mbuf* new_frame(uint32_t len, uint8_t** data);
  rte_mbuf* new_frame_to_peer(PortRuntime& port, uint8_t** frame, MacAddr* dst,
                              uint32_t len = kEthMinFrameLen);
  bool send_control(PortRuntime& port, uint64_t now, rte_mbuf* m);
  void send_from(PortRuntime& port, rte_mbuf* m, uint64_t now);

  // Packets.
  void drop(uint16_t port, rte_mbuf* m, DropReason why);
  // A data packet past forward dropped: modules with a dropped step give
  // back what they counted for it (gated: a gate step let it through at
  // `out`, e.g. debited a window).
  void drop_data(PortRuntime& out, rte_mbuf* m, DropReason why, bool gated, uint64_t now);
  // Admission here (the egress port is this lcore's), or over the ring to
  // the lcore that owns it.
  void admit(rte_mbuf* m, uint64_t now);
  void to_admission(rte_mbuf* m, uint64_t now);
  // admit() with the metadata forward has just written (not read back).
  void admit(PortRuntime& out, rte_mbuf* m, const MbufMeta& meta, uint64_t now);
  // admit() inlined, for admit_burst's loop: true when the packet cut
  // through (real time), or was refused where it could have.
  [[gnu::always_inline]] inline bool admit_data(PortRuntime& out, rte_mbuf* m, const MbufMeta& meta,
                                                uint64_t now);
  // A packet a gate step held goes on to queue choice (its bytes are in the
  // buffer already).
  void admit_released(PortRuntime& out, rte_mbuf* m, uint64_t now);
  void stage_remote(unsigned slot, rte_mbuf* m, uint64_t now);
  // The Ethernet header for `out` (and the shim where the plan has one);
  // returns the IP header.
  [[gnu::always_inline]] inline uint8_t* write_l2(PortRuntime& out, rte_mbuf* m,
                                                  const MbufMeta& meta, uint16_t queue);
  // Moves the start of `m` so that its IP header, at l3_offset, is at
  // `len`: VLAN tags go, or room is made for a shim (within the headroom
  // every received mbuf has, RTE_PKTMBUF_HEADROOM).
  static void place_l3(rte_mbuf* m, uint32_t l3_offset, uint32_t len) {
    if (l3_offset > len)
      rte_pktmbuf_adj(m, static_cast<uint16_t>(l3_offset - len));
    else if (l3_offset < len)
      rte_pktmbuf_prepend(m, static_cast<uint16_t>(len - l3_offset));
  }
  // Where the IP header starts in a data frame write_l2 built for `out`.
  static uint32_t data_l3_offset(const PortRuntime& out) {
    return out.plan.data_shim ? kEthHeaderLen + kSluiceShimLen : kEthHeaderLen;
  }
  void mark_ce(PortCounters& c, uint8_t* ip);
  // Bytes a gate step keeps in the switch outside the egress queues (a
  // VOQ) count against their ingress like queued ones: the modules' hold
  // steps (PFC) count them, and let go again.
  void hold(PortRuntime& out, rte_mbuf* m, const MbufMeta& meta);
  void unhold(PortRuntime& out, rte_mbuf* m);

  // Exact time: something changed what a port or an element will do next;
  // the calendar asks it again. No-ops in real time.
  // The port's wire part (a packet queued, a pause), its timers' part (PFC
  // bytes counted, TCD), its arrivals' part (its host was told something).
  void touch(uint32_t port) {
    if (fabric_) [[unlikely]]
      fabric_->touch(port, FabricLoop::kTx);
  }
  void touch_misc(uint32_t port) {
    if (fabric_) [[unlikely]]
      fabric_->touch(port, FabricLoop::kMisc);
  }
  void touch_rx(uint32_t port) {
    if (fabric_) [[unlikely]]
      fabric_->touch(port, FabricLoop::kRx);
  }
  void touch_element(uint32_t element) {
    if (fabric_) [[unlikely]]
      fabric_->touch(element, FabricLoop::kAll);
  }
  // A packet was queued at `out` (admission's last step).
  void admitted(PortRuntime& out, uint64_t now) {
    if (fabric_) [[unlikely]]
      fabric_->admitted(out, now);
  }
  // Time this lcore was not watching its ports (real time; 0 in exact time).
  uint64_t unwatched_ns() const { return unwatched_ns_; }

  // ---- The loop's steps (also the fabric loop's). ----
  // Receives from the port's medium (rx queue 0), or from `share`, another
  // rx queue of it (RxShare).
  bool poll_port(PortRuntime& port, uint64_t now, PortMedium* share = nullptr);
  bool transmit(PortRuntime& port, uint64_t now);
  // Exact time: transmit() of packet m, which the traffic manager passed
  // straight through (EgressPort::pass) on an idle port.
  void transmit_passed(PortRuntime& port, rte_mbuf* m, uint64_t now);
  void send_arp_requests(PortRuntime& port, uint64_t now);
  void finish(uint64_t end_ns);
  // Each module, in the registry's order: f(module).
  template <class F>
  void each_module(F&& f) {
    std::apply([&](auto&... m) { (f(m), ...); }, modules_.all);
  }

 private:
  void loop();
  bool iterate(uint64_t now, bool timers);
  unsigned receive(PortMedium& from, uint64_t now, rte_mbuf** pkts);
  void handle_received(rte_mbuf* m, uint64_t now);
  unsigned send(PortRuntime& port, uint64_t now, rte_mbuf** pkts, unsigned n,
                const TmPacket* dequeued = nullptr);
  void handle_parsed(PortRuntime& in, rte_mbuf* m, const ParsedPacket& pp, uint64_t now);
  void handle_arp(PortRuntime& in, rte_mbuf* m, const ParsedPacket& pp, uint64_t now);

  // The stages of a packet's path, in order (docs/architecture.md, "A
  // packet's path"); each file says which steps modules take there.
  // Ingress control (stage_ingress_control.cc): frames the peer sends to us.
  void handle_mac_control(PortRuntime& in, rte_mbuf* m, const ParsedPacket& pp, uint64_t now);
  void handle_sluice_control(PortRuntime& in, rte_mbuf* m, const ParsedPacket& pp, uint64_t now);
  // Forward (stage_forward.cc), on the ingress port's lcore.
  void forward(PortRuntime& in, rte_mbuf* m, const ParsedPacket& pp, uint64_t now);
  // A burst of more than one frame on a port whose modules take no forward
  // step: every packet routed (route_packet, with the arrival steps), then
  // the burst admitted in the order received (admit_burst,
  // stage_admission.cc). With forward steps that may run a burst at a time
  // (kForwardInBurst), forward_segments gives it each stretch of IPv4
  // frames, and handles each other frame between them, in order; a module
  // with a forward_run step takes it once for the routed stretch
  // (kRunSteps: route_packet leaves that module's step to it).
  template <bool kSteps, bool kStoreMeta, bool kRunSteps = false>
  [[gnu::always_inline]] inline PortRuntime* route_packet(PortRuntime& in, rte_mbuf* m,
                                                          const ParsedPacket& pp, uint64_t now,
                                                          MbufMeta* meta);
  void forward_burst(PortRuntime& in, rte_mbuf** pkts, const ParsedPacket* pps, unsigned n,
                     uint64_t now);
  void forward_segments(PortRuntime& in, rte_mbuf** pkts, const ParsedPacket* pps, unsigned n,
                        uint64_t now);
  template <bool kStored>
  void admit_burst(PortRuntime& in, rte_mbuf** pkts, const ParsedPacket* pps,
                   PortRuntime* const* outs, const MbufMeta* metas, unsigned n, uint64_t now);
  // Real time, within admit_burst: the packets that follow one that cut
  // through, to the same port and queue (stage_admission.cc).
  template <bool kStored, bool kDeparts, bool kShaped>
  unsigned cut_run(PortRuntime& out, rte_mbuf** pkts, const ParsedPacket* pps,
                   PortRuntime* const* outs, const MbufMeta* metas, unsigned first, unsigned n,
                   uint64_t now);
  template <bool kStored>
  unsigned run_from(PortRuntime& out, rte_mbuf** pkts, const ParsedPacket* pps,
                    PortRuntime* const* outs, const MbufMeta* metas, unsigned first, unsigned n,
                    uint64_t now);
  // cut_run for a port whose queue a module chooses at the pass
  // (kChoiceAtPass): each packet's queue is the module's choice.
  template <class Choice, bool kShaped>
  unsigned choice_run(PortRuntime& out, rte_mbuf** pkts, const ParsedPacket* pps,
                      PortRuntime* const* outs, const MbufMeta* metas, unsigned first, unsigned n,
                      uint64_t now);
  [[gnu::noinline]] unsigned choice_run_from(PortRuntime& out, rte_mbuf** pkts,
                                             const ParsedPacket* pps, PortRuntime* const* outs,
                                             const MbufMeta* metas, unsigned first, unsigned n,
                                             uint64_t now);
  // Admission (stage_admission.cc), on the egress port's lcore: steps 2 to
  // 4 with the queue choice Queues (the class map's, or a module's).
  struct ClassQueues;
  struct FlowQueuesChoice;
  struct ReplyQueue;
  [[gnu::noinline]] void admit_by_flow(PortRuntime& out, rte_mbuf* m, const MbufMeta& meta,
                                       uint64_t now, bool held);
  template <class Choice>
  [[gnu::noinline]] bool admit_by_module(PortRuntime& out, rte_mbuf* m, const MbufMeta& meta,
                                         uint64_t now, bool held);
  [[gnu::noinline]] void admit_reply(PortRuntime& out, rte_mbuf* m, const MbufMeta& meta,
                                     uint64_t now, bool held);
  // After a dequeue from a port that queues by flow: CoDel's drops freed
  // and counted, its marks written.
  void flow_dequeue_results(PortRuntime& port, const TmPacket* out, uint64_t now);
  void dequeue_dropped(PortRuntime& port, const TmPacket& p, DropReason why, uint64_t now);
  template <class Queues>
  [[gnu::always_inline]] inline bool admit_with(PortRuntime& out, rte_mbuf* m, const MbufMeta& meta,
                                                uint64_t now, bool held);
  template <class Queues>
  [[gnu::always_inline]] inline bool admit_chosen(PortRuntime& out, rte_mbuf* m,
                                                  const MbufMeta& meta, uint64_t now, bool held);
  void refuse(PortRuntime& out, rte_mbuf* m, DropReason why, uint64_t now);
  void redirected(PortRuntime& out, rte_mbuf* m, const MbufMeta& meta, uint64_t now);
  // Schedule (the traffic manager's dequeue, worker.cc), then departure
  // (stage_departure.cc), then the port sends.
  unsigned schedule(PortRuntime& port, uint64_t now);
  [[gnu::always_inline]] inline bool send_pending(PortRuntime& port, uint64_t now,
                                                  const TmPacket* dequeued = nullptr);
  bool pass_straight(PortRuntime& out, rte_mbuf* m, const TmPacket& tp, const MbufMeta& meta,
                     uint16_t q, uint8_t* ip, uint64_t now);
  template <class Queues>
  [[gnu::always_inline]] inline bool cut_through(Queues& queues, PortRuntime& out, rte_mbuf* m,
                                                 const TmPacket& tp, const MbufMeta& meta,
                                                 uint16_t q, uint8_t* ip, uint64_t now);
  // The modules' schedule steps, before the traffic manager dequeues (or
  // a packet cuts through).
  void schedule_steps(PortRuntime& port, uint64_t now) {
    each_module([&](auto& m) {
      if constexpr (requires { m.before_schedule(port, now); })
        if (port.plan.takes(Step::kSchedule, module_id(m))) m.before_schedule(port, now);
    });
  }
  void depart(PortRuntime& port, const TmPacket* pkts, unsigned n, uint64_t now);
  void depart_run(PortRuntime& out, unsigned from, unsigned to, uint16_t q, uint64_t now);

  void flush_staged(uint64_t now);
  bool drain_rings(uint64_t now);
  bool drain_control(uint64_t now);
  void record_loop_gap(uint64_t ns, bool busy);

  Runtime& rt_;
  WorkerRuntime& w_;
  TscClock clock_;
  std::vector<PortRuntime*> ports_;  // rt_.ports without the unique_ptr hop
  Modules::Instances modules_;
  std::unique_ptr<FabricLoop> fabric_;  // exact fabric time; nullptr in real time
  struct RingBatch {
    rte_mbuf* pkts[kBurst];
    unsigned count = 0;
  };
  std::vector<RingBatch> staged_;  // per destination worker
  bool control_ring_ = false;      // other lcores may send frames out of our ports
  uint8_t forward_steps_ = 0;      // forward_step_modules(), once
  uint8_t per_packet_steps_ = 0;   // per_packet_forward_modules(), once
  // Time this lcore was not watching its ports: the part of each loop
  // period beyond kWatchedGapNs (a stall). Flowlet gaps are measured on
  // `now - unwatched_ns_`, so a stall of the switch never looks like a
  // pause of the host (the packets wait in the rx ring meanwhile).
  static constexpr uint64_t kWatchedGapNs = 20'000;
  uint64_t unwatched_ns_ = 0;
  bool yield_when_idle_ = false;  // another lcore shares this one's core
  TmPacket dequeued_[kBurst];     // scratch for transmit(), not re-initialised per call
  TmPacket passing_[kBurst];      // scratch for depart_run(): what cut through, as dequeued
  // Packets one arrival may evict from a pFabric buffer (then it is refused
  // itself): a jumbo frame displacing minimum frames. Scratch for admission
  // to a pFabric port, here so that no packet constructs it.
  static constexpr unsigned kMaxEvicted = 160;
  TmPacket evicted_[kMaxEvicted];
};

// VLAN tags and shims do not survive a routed hop: a fresh Ethernet header
// goes right before the IP header, followed where the plan says by the
// 0x88B6 shim that names the queue the packet takes here (and its detour
// count). Returns the IP header.
inline uint8_t* Worker::write_l2(PortRuntime& out, rte_mbuf* m, const MbufMeta& meta,
                                 uint16_t queue) {
  const uint32_t len = data_l3_offset(out);
  place_l3(m, meta.l3_offset, len);
  uint8_t* eth = rte_pktmbuf_mtod(m, uint8_t*);
  std::memcpy(eth, out.eth_header, kEthHeaderLen);
  if (out.plan.data_shim) {
    const uint8_t detours = out.plan.shim_detours && meta.has_detours ? mbuf_extra(m)->detours : 0;
    store_be16(eth + kEthHeaderLen - 2, kEtherTypeSluiceData);
    write_shim(eth + kEthHeaderLen,
               DataShim{queue, shard(out.switch_index), detours, kEtherTypeIpv4});
  }
  return eth + len;
}

// rte_eal_remote_launch entry point; arg is a Worker*.
int worker_main(void* arg);

}  // namespace sluice
