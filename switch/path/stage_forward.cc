// Stage: forward (SPEC 3 step 2), on the lcore that owns the ingress port.
// A parsed IPv4 packet gets its egress port (LPM or the default route, then
// ECMP by the 5-tuple hash), the MTU check and its TTL decrement, and the
// metadata admission needs (egress, L3 offset, the class map's queue, ECN
// capability; where a module accounts by ingress, the ingress port, the
// hash and the shim's upstream queue). The modules' arrival steps read
// what the packet brought before the metadata is written (DIBS's detour
// count); their forward steps record what their later steps need
// (Floodgate's destination and size) or keep the packet (Flowtune's pacer
// holds it until its flow's rate allows). It then goes to admission here,
// or over the ring to the egress port's lcore.

#include <rte_lpm.h>

#include "lib/control/data_shim.h"
#include "lib/emulator/transport/segment_wire.h"
#include "lib/net/ipv4_rewrite.h"
#include "lib/tm/class_map.h"
#include "switch/path/worker.h"

namespace sluice {

// Forward's decision for one packet: its egress port, with the metadata
// admission needs in *meta, or nullptr when forward consumed the packet
// (dropped it, or a module's forward step kept it). kSteps: the ingress
// port's modules take arrival or forward steps (in.in_steps != 0).
// kStoreMeta: *meta goes into the mbuf here too; else admit_burst puts it
// there, for every packet but those of a cut-through run, which nothing
// reads it from (forward_burst, where the ingress takes no arrival step:
// with one, the packing is cheaper here than from the array). kRunSteps:
// a module with a forward_run step is left to take it for the whole
// routed stretch (forward_burst).
template <bool kSteps, bool kStoreMeta, bool kRunSteps>
[[gnu::always_inline]] inline PortRuntime* Worker::route_packet(PortRuntime& in, rte_mbuf* m,
                                                                const ParsedPacket& pp,
                                                                uint64_t now, MbufMeta* meta) {
  const SwitchRuntime& sw = rt_.switches[in.switch_index];
  const uint32_t nh = route_next_hop(sw, pp.dst_ip);
  if (nh == kNoDefaultRoute) return drop(in.index, m, DropReason::kNoRoute), nullptr;
  if (nh == kLocalNextHop) return drop(in.index, m, DropReason::kLocalDelivery), nullptr;
  const NextHopGroup16& g = sw.groups[nh];
  uint16_t egress = g.ports[0];
  uint64_t salted = 0;  // the flow hash a queue choice may use
  uint32_t h = 0;       // its low half
  if (g.size > 1 || sw.flow_hash) {
    // Salted from the configuration's seed (lib/common/seeds.h).
    salted = switch_flow_hash(sw, pp.src_ip, pp.dst_ip, pp.proto, pp.src_port, pp.dst_port);
    h = static_cast<uint32_t>(salted);
    egress = ecmp_member(g, salted);
  }
  // In a large emulated fabric the egress port's state is cold: ask for all
  // of its lines at once rather than one miss at a time.
  if (fabric_) [[unlikely]]
    fabric_->prefetch_port(egress);
  PortRuntime& out = *ports_[egress];
  if (pp.ip_total_len > out.mtu) return drop(in.index, m, DropReason::kTooBig), nullptr;
  uint8_t* ip = rte_pktmbuf_mtod(m, uint8_t*) + pp.l3_offset;
  ipv4_decrement_ttl(ip);
  uint16_t q = sw.dscp_classes ? queue_for_dscp(pp.tos >> 2, sw.queues_per_port) : 0;
  // The transport's replies take the queue after the data queues.
  if (sw.reply_queue && pp.proto == kIpProtoUdp && slt_is_reply(ip, m->data_len - pp.l3_offset))
    q = sw.queues_per_port;
  // Arrival steps: before the metadata is overwritten (an internal link's
  // upstream switch left its own there); a count of 0 leaves the mbuf's
  // field alone.
  uint8_t detours = 0;
  if constexpr (kSteps) {
    each_module([&](auto& mod) {
      if constexpr (requires { mod.arrival(in, m, pp); })
        if ((in.in_steps >> module_id(mod)) & 1) detours = mod.arrival(in, m, pp);
    });
    if (detours != 0) mbuf_extra(m)->detours = detours;
  }
  *meta = MbufMeta{egress,
                   static_cast<uint8_t>(pp.l3_offset),
                   static_cast<uint8_t>(q),
                   (pp.tos & 3) != 0,
                   false,
                   detours != 0};
  if constexpr (kStoreMeta) mbuf_meta_set(m, *meta);
  if (sw.ingress_meta) {
    MbufExtra* x = mbuf_extra(m);
    x->ingress = in.index;  // modules account by ingress (PFC, BFC, Floodgate)
    // The whole hash, for a port that queues by flow (a store costs less
    // than asking); BFC's entry and Floodgate's fields, written later,
    // share these bytes.
    x->flow.lo = h;
    x->flow.hi = static_cast<uint32_t>(salted >> 32);
    // Only a BFC peer's shim (a switch's, or a BFC NIC's) names an upstream queue.
    x->upstream_queue =
        pp.has_shim && in.reads_upstream_queue
            ? read_shim(rte_pktmbuf_mtod(m, uint8_t*) + pp.shim_offset).upstream_queue
            : kNoUpstreamQueue;
  }
  if constexpr (kSteps) {
    bool go = true;
    each_module([&](auto& mod) {
      if constexpr (requires { mod.forward(in, m, pp, now); }) {
        if constexpr (kRunSteps && requires { mod.forward_run(in, &m, &pp, nullptr, 1u, now); })
          return;
        if (go && ((in.in_steps >> module_id(mod)) & 1)) go = mod.forward(in, m, pp, now);
      }
    });
    if (!go) return nullptr;
  }
  return &out;
}

void Worker::forward(PortRuntime& in, rte_mbuf* m, const ParsedPacket& pp, uint64_t now) {
  MbufMeta meta;
  PortRuntime* out = in.in_steps != 0 ? route_packet<true, true>(in, m, pp, now, &meta)
                                      : route_packet<false, true>(in, m, pp, now, &meta);
  if (out == nullptr) return;
  if (out->owner_slot == w_.slot) {
    admit(*out, m, meta, now);
  } else {
    stage_remote(out->owner_slot, m, now);
  }
}

// A received burst whose ingress port's modules take no forward step:
// routed whole, then admitted whole (admit_burst). Routing and the arrival
// steps (DIBS's detour count) read only the packet and the switch's tables,
// so routing the whole burst first gives what routing each packet just
// before its admission would.
void Worker::forward_burst(PortRuntime& in, rte_mbuf** pkts, const ParsedPacket* pps, unsigned n,
                           uint64_t now) {
  PortRuntime* outs[kBurst];
  MbufMeta metas[kBurst];
  if (in.in_steps == 0) {
    for (unsigned i = 0; i < n; ++i)
      outs[i] = pps[i].kind == PacketKind::kIpv4
                    ? route_packet<false, false>(in, pkts[i], pps[i], now, &metas[i])
                    : nullptr;
    admit_burst<false>(in, pkts, pps, outs, metas, n, now);
  } else {
    for (unsigned i = 0; i < n; ++i)
      outs[i] = pps[i].kind == PacketKind::kIpv4
                    ? route_packet<true, true, true>(in, pkts[i], pps[i], now, &metas[i])
                    : nullptr;
    // The run steps route_packet left out, each module's for the stretch.
    each_module([&](auto& mod) {
      if constexpr (requires { mod.forward_run(in, pkts, pps, outs, n, now); })
        if ((in.in_steps >> module_id(mod)) & 1) mod.forward_run(in, pkts, pps, outs, n, now);
    });
    admit_burst<true>(in, pkts, pps, outs, metas, n, now);
  }
}

// A received burst whose ingress port's forward steps may run a burst at a
// time (kForwardInBurst): each stretch of IPv4 frames routed whole, then
// admitted (forward_burst); each other frame handled where it stands, so a
// control frame's step sees the forward steps of the frames before it
// only (Floodgate's FG_SYNC, the count of data received).
void Worker::forward_segments(PortRuntime& in, rte_mbuf** pkts, const ParsedPacket* pps, unsigned n,
                              uint64_t now) {
  unsigned i = 0;
  while (i < n) {
    unsigned end = i;
    while (end < n && pps[end].kind == PacketKind::kIpv4) ++end;
    if (end - i > 1) {
      forward_burst(in, pkts + i, pps + i, end - i, now);
    } else if (end - i == 1) {
      forward(in, pkts[i], pps[i], now);
    }
    if (end < n) handle_parsed(in, pkts[end], pps[end], now);
    i = end + 1;
  }
}

}  // namespace sluice
