// DIBS's steps in a worker's loop (SPEC 4.3; docs/mechanisms/dibs.md, "In
// the data path"):
//   - forward: the detour count a packet arrives with (shim or mbuf);
//   - admission, refusal: instead of a drop, a switch-facing port that
//     admits the packet is chosen (DibsRules); on this lcore the packet is
//     enqueued there at once, otherwise it crosses the ring to the port's
//     owner, which runs the ordinary admission again;
//   - the detour is charged like any packet and marked CE if ECN-capable;
//   - departure toward a host: the packet's count into the histogram;
//   - each pass: the snapshots other lcores choose from, when the switch's
//     candidates span lcores.

#include "lib/control/data_shim.h"
#include "lib/mechanisms/dibs/detour_admission.h"
#include "lib/net/ethertypes.h"
#include "switch/path/worker.h"

namespace sluice {

// A shim is believed only from a switch-facing peer (a host cannot claim
// detours); over an internal link from a DIBS switch the count is the one
// that switch's forward stage left in the mbuf.
uint8_t Worker::dibs_arrival_count(const PortRuntime& in, rte_mbuf* m, const ParsedPacket& pp) {
  if (pp.has_shim && in.cfg->role == PortRole::kSwitch)
    return read_shim(rte_pktmbuf_mtod(m, const uint8_t*) + pp.shim_offset).detours;
  return in.dibs_link && mbuf_meta_get(m).has_detours ? mbuf_extra(m)->detours : 0;
}

// `out` refused the packet, whose L2 header for `out` is written already.
void Worker::detour(PortRuntime& out, rte_mbuf* m, uint64_t now) {
  const SwitchRuntime& sw = rt_.switches[out.switch_index];
  DibsRuntime& d = *sw.dibs;
  DibsRules& rules = *w_.dibs[out.switch_index];
  MbufExtra* x = mbuf_extra(m);
  const MbufMeta meta = mbuf_meta_get(m);
  const uint32_t bytes = m->pkt_len;
  DetourCandidate* c = detour_scratch_.data();
  const uint32_t n = static_cast<uint32_t>(d.candidates.size());
  for (uint32_t i = 0; i < n; ++i) {
    const PortRuntime& p = *ports_[d.candidates[i]];
    c[i].port = d.local[p.index];
    c[i].role = PortRole::kSwitch;
    if (p.owner_slot == w_.slot) {
      c[i].admits = p.eth_header_ready && detour_admits(*p.tm, meta.queue, bytes, now);
      c[i].queued_bytes = p.tm->queue_bytes(meta.queue);
    } else {
      c[i].admits = detour_claims_[sw.index][i].admits(d.snapshots[i], bytes);
      c[i].queued_bytes = d.snapshots[i].queued_bytes();
    }
  }
  const uint8_t taken = meta.has_detours ? x->detours : 0;
  const DetourDecision dec = rules.on_refused(taken, c, n, d.local[out.index]);
  if (dec.port == kNoDetour) return drop_data(out, m, dec.reason, false, now);
  x->detours = dec.detours;
  PortRuntime& to = *ports_[sw.ports[dec.port]];
  const uint8_t l3 = static_cast<uint8_t>(data_l3_offset(out));
  const bool remote = to.owner_slot != w_.slot;
  const MbufMeta moved{to.index, l3, meta.queue, meta.ecn_capable, remote, true};
  mbuf_meta_set(m, moved);
  if (!remote) return admit_detour(to, m, moved, now);
  uint32_t i = 0;
  while (c[i].port != dec.port) ++i;  // the chooser returned one of c[0..n)
  detour_claims_[sw.index][i].claim(bytes);
  stage_remote(to.owner_slot, m, now);
}

// The chosen port's owner: the ordinary admission; a refusal (the chooser
// saw an older snapshot) is a drop, never a second detour from here.
void Worker::admit_detour(PortRuntime& to, rte_mbuf* m, MbufMeta meta, uint64_t now) {
  if (meta.detour) {
    to.dibs_handed_bytes += m->pkt_len;  // another lcore's (its claim)
    meta.detour = false;
    mbuf_meta_set(m, meta);
  }
  DibsRules& rules = *w_.dibs[to.switch_index];
  if (!to.eth_header_ready) return drop_data(to, m, rules.on_detour_refused(), false, now);
  uint8_t* ip = write_l2(to, m, meta, meta.queue);
  TmPacket tp;
  tp.handle = m;
  tp.bytes = m->pkt_len;
  const EnqueueResult r = to.tm->enqueue(now, meta.queue, tp, meta.ecn_capable);
  if (r.verdict == EnqueueVerdict::kDropped)
    return drop_data(to, m, rules.on_detour_refused(), false, now);
  touch(to.index);
  rules.on_detoured(rt_.switches[to.switch_index].dibs->local[to.index]);
  if (meta.ecn_capable) mark_ce(counters(to.index), ip);
}

void Worker::dibs_exit(PortRuntime& port, const TmPacket& p) {
  rte_mbuf* m = static_cast<rte_mbuf*>(p.handle);
  w_.dibs[port.switch_index]->on_exit(mbuf_meta_get(m).has_detours ? mbuf_extra(m)->detours : 0);
}

void Worker::publish_dibs(uint64_t now) {
  for (const auto& [s, c] : w_.dibs_publish) {
    DibsRuntime& d = *rt_.switches[s].dibs;
    const PortRuntime& p = *ports_[d.candidates[c]];
    publish_snapshot(*p.tm, now, p.dibs_handed_bytes, &d.snapshots[c]);
  }
}

}  // namespace sluice
