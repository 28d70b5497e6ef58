#pragma once
// One worker lcore's run-to-completion loop: receive on owned ports, parse,
// route, hand each packet to its egress port's traffic manager (directly, or
// over the ring to the lcore that owns that port), then transmit what the
// traffic managers release.

#include <rte_mbuf.h>

#include <cstdint>
#include <cstring>

#include "lib/common/emulated_clock.h"
#include "lib/control/control_frame.h"
#include "lib/control/data_shim.h"
#include "lib/net/ethertypes.h"
#include "lib/net/packet_parser.h"
#include "switch/mbuf_meta.h"
#include "switch/runtime.h"

namespace sluice {

class Worker {
 public:
  Worker(Runtime& rt, WorkerRuntime& w);
  // Runs until rt.stop is set.
  void run();

 private:
  void loop();
  bool iterate(uint64_t now, bool timers);
  unsigned receive(PortRuntime& port, uint64_t now, rte_mbuf** pkts);
  unsigned send(PortRuntime& port, uint64_t now, rte_mbuf** pkts, unsigned n);
  bool poll_port(PortRuntime& port, uint64_t now);
  void handle_packet(PortRuntime& in, rte_mbuf* m, uint64_t now);
  void route_ipv4(PortRuntime& in, rte_mbuf* m, const ParsedPacket& pp, uint64_t now);
  void handle_arp(PortRuntime& in, rte_mbuf* m, const ParsedPacket& pp, uint64_t now);
  void handle_mac_control(PortRuntime& in, rte_mbuf* m, const ParsedPacket& pp, uint64_t now);
  void generate_pfc(PortRuntime& port, uint64_t now);
  void admit(rte_mbuf* m, uint64_t now);
  static constexpr uint16_t kNoIngress = 0xFFFF;
  uint16_t pfc_ingress_of(const PortRuntime& out, rte_mbuf* m);
  void count_pfc_ingress(const PortRuntime& out, rte_mbuf* m, uint16_t ingress,
                         uint16_t class_queue, uint32_t bytes);
  uint8_t* write_l2(PortRuntime& out, rte_mbuf* m, uint8_t l3_offset, uint16_t queue);
  void mark_ce(PortCounters& c, uint8_t* ip);
  // BFC (worker_bfc.cc).
  void admit_bfc(PortRuntime& out, rte_mbuf* m, const MbufMeta& meta, uint64_t now);
  void bfc_departure(PortRuntime& port, const TmPacket& p, uint64_t now);
  void handle_sluice_control(PortRuntime& in, rte_mbuf* m, const ParsedPacket& pp);
  rte_mbuf* new_frame_to_peer(PortRuntime& port, uint8_t** frame, MacAddr* dst);
  void send_bfc(uint16_t port, ControlType type, uint16_t queue, uint64_t now);
  void send_bfc_bitmaps(uint64_t now);
  void send_from(PortRuntime& port, rte_mbuf* m, uint64_t now);
  bool drain_control(uint64_t now);
  void stage_remote(unsigned slot, rte_mbuf* m);
  void flush_staged();
  bool drain_rings(uint64_t now);
  bool transmit(PortRuntime& port, uint64_t now);
  void send_arp_requests(PortRuntime& port, uint64_t now);
  rte_mbuf* new_frame(uint32_t len, uint8_t** data);
  bool send_control(PortRuntime& port, uint64_t now, rte_mbuf* m);
  void drop(uint16_t port, rte_mbuf* m, DropReason why);
  void record_loop_gap(uint64_t ns, bool busy);
  void publish_clock(uint64_t now);
  PortCounters& counters(uint16_t port) { return w_.counters[port]; }

  Runtime& rt_;
  WorkerRuntime& w_;
  TscClock clock_;
  EmulatedClock emulated_;  // the data path's `now`: real, or virtual time
  struct Stage {
    rte_mbuf* pkts[kBurst];
    unsigned count = 0;
  };
  std::vector<Stage> staged_;  // per destination worker
  std::vector<PortRuntime*> ports_;  // rt_.ports without the unique_ptr hop
  bool bfc_ = false;                 // some switch this worker serves runs BFC
  bool yield_when_idle_ = false;     // another lcore shares this one's core
  TmPacket dequeued_[kBurst];        // scratch for transmit(), not re-initialised per call
};

// The ingress port a data packet to `out` is counted against for PFC
// (TmPacket::aux = ingress + 1 until it leaves), or kNoIngress. Per packet,
// from worker.cc and worker_bfc.cc, so inline.
inline uint16_t Worker::pfc_ingress_of(const PortRuntime& out, rte_mbuf* m) {
  if (!rt_.switches[out.switch_index].pfc_on) return kNoIngress;
  const uint16_t in = mbuf_extra(m)->ingress;
  return ports_[in]->pfc_ingress ? in : kNoIngress;
}

// VLAN tags and shims do not survive a routed hop: a fresh Ethernet header
// goes right before the IP header, followed toward a BFC peer by the 0x88B6
// shim that names the queue the packet takes here. Returns the IP header.
// Per packet, from worker.cc and worker_bfc.cc, so inline.
inline uint8_t* Worker::write_l2(PortRuntime& out, rte_mbuf* m, uint8_t l3_offset, uint16_t queue) {
  const uint32_t len = out.bfc_peer ? kEthHeaderLen + kSluiceShimLen : kEthHeaderLen;
  if (l3_offset > len) {
    rte_pktmbuf_adj(m, static_cast<uint16_t>(l3_offset - len));
  } else if (l3_offset < len) {
    // Within the headroom every received mbuf has (RTE_PKTMBUF_HEADROOM).
    rte_pktmbuf_prepend(m, static_cast<uint16_t>(len - l3_offset));
  }
  uint8_t* eth = rte_pktmbuf_mtod(m, uint8_t*);
  std::memcpy(eth, out.eth_header, kEthHeaderLen);
  if (out.bfc_peer) {
    store_be16(eth + kEthHeaderLen - 2, kEtherTypeSluiceData);
    write_shim(eth + kEthHeaderLen,
               DataShim{queue, static_cast<uint8_t>(w_.slot), 0, kEtherTypeIpv4});
  }
  return eth + len;
}

// rte_eal_remote_launch entry point; arg is a Worker*.
int worker_main(void* arg);

}  // namespace sluice
