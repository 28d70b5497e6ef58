#pragma once
// One worker lcore's run-to-completion loop: receive on owned ports, parse,
// then take each packet through the stages of its path (ingress control or
// forward; admission, directly or over the ring to the lcore that owns the
// egress port; schedule; departure) and transmit what the traffic managers
// release.

#include <rte_mbuf.h>

#include <algorithm>
#include <cstdint>

#include "lib/control/control_frame.h"
#include "lib/emulator/event_calendar.h"
#include "lib/net/ethertypes.h"
#include "lib/net/packet_parser.h"
#include "switch/path/mbuf_meta.h"
#include "switch/runtime/runtime.h"

namespace sluice {

class Worker {
 public:
  Worker(Runtime& rt, WorkerRuntime& w);
  // Runs until rt.stop is set.
  void run();

 private:
  void loop();
  bool iterate(uint64_t now, bool timers);

  // Exact fabric time (exact_loop.cc; docs/testbed.md, "Exact fabric
  // time"): the calendar's elements are this lcore's ports (id = global
  // port index), then per switch its BFC bitmaps and its Floodgate timers,
  // then the queue trace, then per Flowtune edge its timers (held packets
  // due, a flowlet's idle gap run out), then Flowtune's allocator in the
  // fabric. Each is handled only when it is due. A port keeps
  // three due times, so that what touches one side of it (a packet queued
  // for its wire, PFC bytes counted against it) asks only that side again.
  static constexpr uint8_t kDueRx = 1;    // a frame arrives; its host NIC acts
  static constexpr uint8_t kDueTx = 2;    // its traffic manager may send
  static constexpr uint8_t kDueMisc = 4;  // PFC refresh, TCD expiry, ARP retry
  static constexpr uint8_t kDueAll = 7;
  struct PortDue {
    uint64_t rx = EventCalendar::kNever;
    uint64_t tx = EventCalendar::kNever;
    uint64_t misc = EventCalendar::kNever;
    uint64_t min() const { return std::min({rx, tx, misc}); }
  };
  struct Exact {
    explicit Exact(uint32_t elements, uint32_t ports)
        : cal(elements), port(ports), dirty(elements, 0), in_ready(elements, 0) {
      touched.reserve(elements);  // no allocation once the run is under way
      ready.reserve(elements);
    }
    EventCalendar cal;
    uint64_t now = 0;
    std::vector<PortDue> port;  // per global port
    // Elements whose due time something changed while another was handled
    // (bits kDue*): asked again once that element is done.
    std::vector<uint8_t> dirty;
    std::vector<uint32_t> touched;
    // Elements due at `now` that became due while it was handled: taken in
    // the order they became due, before the calendar's next entry. (A
    // packet queued at an idle port makes it due at once: no heap visit.)
    std::vector<uint32_t> ready;
    size_t ready_head = 0;
    std::vector<uint8_t> in_ready;
    uint32_t bfc_base = 0;         // first BFC bitmap element (switch 0)
    uint32_t fg_base = 0;          // first Floodgate element (switch 0)
    uint32_t trace_id = 0;         // the queue trace
    uint32_t ft_base = 0;          // first Flowtune edge (ft_edges_[0])
    uint32_t ft_allocator_id = 0;  // Flowtune's allocator in the fabric
    uint64_t at_instant = 0;       // elements handled at `now` so far
  };
  void loop_exact();
  void audit_calendar(uint64_t now);
  const char* exact_element_name(uint32_t id) const;
  void print_port_sides(uint32_t id) const;
  void exact_handle(uint32_t id, uint64_t now);
  void exact_handle_port(PortRuntime& port, uint64_t now);
  void exact_schedule(uint32_t id, uint64_t due);
  // A packet was queued at `out`: an idle port whose wire is free starts
  // sending it at once (what the calendar would do at this instant, less
  // a visit); either way its wire's side is asked again.
  void exact_admitted(PortRuntime& out, uint64_t now);
  // A frame put on a link reaches port `rx` at `due`.
  void exact_link_arrival(uint16_t rx, uint64_t due) {
    PortDue& d = exact_->port[rx];
    if (due >= d.rx) return;
    d.rx = due;
    if (!exact_->in_ready[rx]) exact_->cal.at_least(rx, due);
  }
  void exact_settle(uint32_t id, uint8_t what, uint64_t now);
  uint64_t exact_due(uint32_t id, uint64_t now);
  uint64_t port_rx_due(PortRuntime& port, uint64_t now);
  uint64_t port_tx_due(const PortRuntime& port, uint64_t now) const;
  uint64_t port_misc_due(const PortRuntime& port, uint64_t now) const;
  uint64_t fg_due(uint16_t sw, uint64_t now);
  void exact_touch(uint32_t id, uint8_t what) {
    Exact& x = *exact_;
    if (x.dirty[id] == 0) x.touched.push_back(id);
    x.dirty[id] |= what;
  }
  // Something changed what element `id` will do next (a packet queued at a
  // port, a frame for it, credit to send): exact time asks it again. For a
  // port, touch() is its wire's side, touch_misc() its PFC side.
  void touch(uint32_t id) {
    if (exact_) [[unlikely]]
      exact_touch(id, kDueTx);
  }
  void touch_misc(uint32_t port) {
    if (exact_) [[unlikely]]
      exact_touch(port, kDueMisc);
  }
  void fg_touch(uint16_t sw) {
    if (exact_) [[unlikely]]
      exact_touch(exact_->fg_base + sw, kDueAll);
  }
  // A Flowtune edge's timers, or the allocator's due time, may have moved.
  void ft_touch(const FlowtuneEdge& e) {
    if (exact_) [[unlikely]]
      exact_touch(e.element, kDueAll);
  }
  void ft_touch_allocator() {
    if (exact_) [[unlikely]]
      exact_touch(exact_->ft_allocator_id, kDueAll);
  }
  unsigned receive(PortRuntime& port, uint64_t now, rte_mbuf** pkts);
  unsigned send(PortRuntime& port, uint64_t now, rte_mbuf** pkts, unsigned n);
  bool poll_port(PortRuntime& port, uint64_t now);
  void handle_parsed(PortRuntime& in, rte_mbuf* m, const ParsedPacket& pp, uint64_t now);
  void handle_arp(PortRuntime& in, rte_mbuf* m, const ParsedPacket& pp, uint64_t now);
  bool pfc_decision(const PortRuntime& port, uint64_t now, PfcDecision* d) const;
  void generate_pfc(PortRuntime& port, uint64_t now);

  // The stages of a packet's path, in order (docs/architecture.md, "A
  // packet's path"); each file says which mechanisms plug in.
  // Ingress control (stage_ingress_control.cc): frames the peer sends to us.
  void handle_mac_control(PortRuntime& in, rte_mbuf* m, const ParsedPacket& pp, uint64_t now);
  void handle_sluice_control(PortRuntime& in, rte_mbuf* m, const ParsedPacket& pp, uint64_t now);
  // Forward (stage_forward.cc), on the ingress port's lcore.
  void forward(PortRuntime& in, rte_mbuf* m, const ParsedPacket& pp, uint64_t now);
  // Admission (stage_admission.cc), on the egress port's lcore. Queue choice
  // is by class or by BFC (queue_choice.h); the other steps are the same.
  void admit(rte_mbuf* m, uint64_t now);
  struct ClassQueues;
  struct BfcQueues;
  template <class Queues>
  void admit_with(PortRuntime& out, rte_mbuf* m, const MbufMeta& meta, uint64_t now, bool held);
  void refuse(PortRuntime& out, rte_mbuf* m, DropReason why, uint64_t now);
  // A data packet past forward dropped: what Floodgate counted for it is
  // given back (debited: its window was charged here).
  void drop_data(PortRuntime& out, rte_mbuf* m, DropReason why, bool debited, uint64_t now);
  // A packet Floodgate held in a VOQ goes on to queue choice.
  void admit_released(PortRuntime& out, rte_mbuf* m, uint64_t now);
  static constexpr uint16_t kNoIngress = 0xFFFF;
  uint16_t pfc_ingress_of(const PortRuntime& out, rte_mbuf* m);
  void count_pfc_ingress(const PortRuntime& out, rte_mbuf* m, uint16_t ingress,
                         uint16_t class_queue, uint32_t bytes);
  uint8_t* write_l2(PortRuntime& out, rte_mbuf* m, const MbufMeta& meta, uint16_t queue);
  // Where the IP header starts in a data frame write_l2 built for `out`:
  // after the Ethernet header, and the 0x88B6 shim where the plan has one.
  static uint32_t data_l3_offset(const PortRuntime& out) {
    return out.plan.data_shim ? kEthHeaderLen + kSluiceShimLen : kEthHeaderLen;
  }
  void mark_ce(PortCounters& c, uint8_t* ip);
  // Schedule (the traffic manager's dequeue, worker.cc), then departure
  // (stage_departure.cc), then the port sends.
  bool transmit(PortRuntime& port, uint64_t now);
  unsigned schedule(PortRuntime& port, uint64_t now);
  void depart(PortRuntime& port, const TmPacket* pkts, unsigned n, uint64_t now);

  // BFC (worker_bfc.cc): its departure step, and the frames it sends.
  void bfc_departure(PortRuntime& port, const TmPacket& p, uint64_t now);
  void send_bfc(uint16_t port, ControlType type, uint16_t queue, uint64_t now);
  void send_bfc_bitmaps(uint64_t now);
  void send_bfc_bitmaps_of(uint16_t sw, uint64_t now);
  // DIBS (worker_dibs.cc): the detour count at forward, the detour instead
  // of a drop, its admission at the chosen port's owner, the exit count,
  // and the snapshots published for other lcores.
  uint8_t dibs_arrival_count(const PortRuntime& in, rte_mbuf* m, const ParsedPacket& pp);
  void detour(PortRuntime& out, rte_mbuf* m, uint64_t now);
  void admit_detour(PortRuntime& to, rte_mbuf* m, MbufMeta meta, uint64_t now);
  void dibs_exit(PortRuntime& port, const TmPacket& p);
  void int_departure(PortRuntime& port, const TmPacket& p, uint64_t now);
  void note_host_flow(FlowtuneEdge& e, const PortRuntime& in, const rte_mbuf* m,
                      const ParsedPacket& pp, uint32_t flowlet);
  void flowtune_host_rate(FlowtuneEdge& e, uint32_t flowlet, uint32_t kbps, uint64_t now);
  void publish_dibs(uint64_t now);
  // TCD (worker_tcd.cc): pauses seen each pass, marking at departure, timer.
  void tcd_track_pauses(PortRuntime& port, uint64_t now);
  void tcd_departure(PortRuntime& port, const TmPacket& p, uint64_t now);
  void tcd_timer(PortRuntime& port, uint64_t now);
  // Frames a mechanism builds for a port's peer, sent ahead of data from
  // any lcore (over the owner's control ring when it is another).
  rte_mbuf* new_frame_to_peer(PortRuntime& port, uint8_t** frame, MacAddr* dst,
                              uint32_t len = kEthMinFrameLen);
  void send_from(PortRuntime& port, rte_mbuf* m, uint64_t now);
  bool drain_control(uint64_t now);

  // Floodgate (worker_floodgate.cc): its admission and departure steps, the
  // frames it receives and sends, and its timers.
  bool fg_window(PortRuntime& out, rte_mbuf* m, const MbufMeta& meta, uint64_t now);
  void fg_ingress(const SwitchRuntime& sw, const PortRuntime& in, rte_mbuf* m,
                  const ParsedPacket& pp, MbufExtra* x, uint64_t now);
  void fg_departure(PortRuntime& port, const TmPacket& p, uint64_t now);
  void fg_dropped(PortRuntime& out, rte_mbuf* m, bool debited, uint64_t now);
  void fg_left(FloodgateRuntime& fg, const MbufExtra& x, uint64_t now);
  void handle_fg_control(PortRuntime& in, rte_mbuf* m, const ControlMessage& msg, uint64_t now);
  void fg_take_credit(FloodgateRuntime& fg, uint32_t ingress, const ControlMessage& msg);
  void fg_take_sync(FloodgateRuntime& fg, uint16_t sw, uint32_t ingress, const ControlMessage& msg,
                    uint64_t now);
  [[gnu::noinline]] void fg_earn_credit(uint16_t sw, uint32_t ingress, uint32_t dst, uint64_t bytes,
                                        uint64_t now);
  void send_fg_credit(uint16_t sw, uint32_t ingress, uint64_t now);
  void send_dst_pause(const FloodgateRuntime& fg, uint32_t host, uint32_t dst, bool pause,
                      uint64_t now);
  void send_fg_sync(FloodgateRuntime& fg, uint64_t now);
  void fg_drain(FloodgateRuntime& fg, uint64_t now);
  bool fg_timers(uint64_t now);
  bool fg_timers_of(uint16_t sw, uint64_t now);
  void fg_count_credit_sent(PortRuntime& port, const rte_mbuf* m, uint64_t now);
  rte_mbuf* credit_frame(PortRuntime& port, const CreditEntry* entries, uint32_t n);

  // Flowtune (worker_flowtune.cc): the edge's flowlets and pacer between
  // forward and admission, and its timers.
  bool flowtune_pace(PortRuntime& in, rte_mbuf* m, const ParsedPacket& pp, uint64_t now);
  void flowtune_end(FlowtuneEdge& e, uint32_t flow_id, uint64_t now);
  void flowtune_flush(FlowtuneEdge& e, uint32_t slot, uint64_t now);
  void release_held(FlowtuneEdge& e, const PacedQueues::Held& h, uint64_t now);
  bool flowtune_timers(uint64_t now);
  void flowtune_release_all(uint64_t now);
  // Exact time: an edge's timers when due, and its due time; the allocator
  // in the fabric when due (rates it delivers go to their edges' pacers).
  void flowtune_edge_exact(FlowtuneEdge& e, uint64_t now);
  uint64_t flowtune_edge_due(const FlowtuneEdge& e, uint64_t now) const;
  void flowtune_allocator_exact(uint64_t now);
  // Admission here, or over the ring to the egress port's owner.
  void to_admission(rte_mbuf* m, uint64_t now);

  void stage_remote(unsigned slot, rte_mbuf* m, uint64_t now);
  void flush_staged(uint64_t now);
  bool drain_rings(uint64_t now);
  void send_arp_requests(PortRuntime& port, uint64_t now);
  rte_mbuf* new_frame(uint32_t len, uint8_t** data);
  bool send_control(PortRuntime& port, uint64_t now, rte_mbuf* m);
  void drop(uint16_t port, rte_mbuf* m, DropReason why);
  void record_loop_gap(uint64_t ns, bool busy);
  void finish(uint64_t end_ns);
  PortCounters& counters(uint16_t port) { return w_.counters[port]; }

  Runtime& rt_;
  WorkerRuntime& w_;
  TscClock clock_;
  std::unique_ptr<Exact> exact_;  // exact fabric time; nullptr in real time
  struct RingBatch {
    rte_mbuf* pkts[kBurst];
    unsigned count = 0;
  };
  std::vector<RingBatch> staged_;        // per destination worker
  std::vector<PortRuntime*> ports_;      // rt_.ports without the unique_ptr hop
  bool bfc_ = false;                     // some switch this worker serves runs BFC
  bool control_ring_ = false;            // other lcores may send frames out of our ports
  std::vector<uint16_t> fg_switches_;    // Floodgate switches this lcore earns credit for
  std::vector<FlowtuneEdge*> ft_edges_;  // Flowtune edges of the host ports this lcore owns
  // Per switch: this lcore's ports whose XOFF threshold follows the free
  // buffer (pfc.dynamic), which exact time asks again after any of the
  // switch's ports moved packets.
  std::vector<std::vector<uint16_t>> pfc_dynamic_;
  // Time this lcore was not watching its ports: the part of each loop
  // period beyond kWatchedGapNs (a stall). Flowlet gaps are measured on
  // `now - unwatched_ns_`, so a stall of the switch never looks like a
  // pause of the host (the packets wait in the rx ring meanwhile).
  static constexpr uint64_t kWatchedGapNs = 20'000;
  uint64_t unwatched_ns_ = 0;
  // Per switch: a window this lcore writes rose outside credit intake.
  std::vector<uint8_t> fg_drain_due_;
  bool yield_when_idle_ = false;  // another lcore shares this one's core
  TmPacket dequeued_[kBurst];     // scratch for transmit(), not re-initialised per call
  std::vector<DetourCandidate> detour_scratch_;  // detour(): one per candidate port
  // Per switch, per candidate: the room of other lcores' snapshots this one
  // has handed out (empty where the switch's ports do not span lcores).
  std::vector<std::vector<SnapshotClaims>> detour_claims_;
};

// rte_eal_remote_launch entry point; arg is a Worker*.
int worker_main(void* arg);

}  // namespace sluice
