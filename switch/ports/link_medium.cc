#include "switch/ports/link_medium.h"

#include <algorithm>

#include "lib/net/ethertypes.h"

namespace sluice {
namespace {

// An internal link's wire may fall idle while frames wait because the loop
// came back late. Like the shaper's bucket, it then catches up: frames start
// where the wire fell free, at most this far in the past. Beyond that the
// idle time is lost transmit time (emulation fidelity).
constexpr uint64_t kLinkCatchUpNs = 200'000;

unsigned link_send(LinkDirection& d, uint64_t now_ns, rte_mbuf** pkts, const TmPacket* dequeued,
                   unsigned n, uint64_t* lost, uint64_t* first_due, const rte_mbuf** first) {
  // Only this lcore produces into the ring, so its free count cannot shrink
  // under us: due times are given only to frames that will be enqueued.
  const unsigned room = d.ring.free_count();
  const unsigned take = n < room ? n : room;
  LinkSlot kept[kBurst];
  unsigned k = 0;
  for (unsigned i = 0; i < take; ++i) {
    rte_mbuf* m = pkts[i];
    const uint64_t due =
        d.timing.depart(now_ns, dequeued != nullptr ? dequeued[i].bytes : m->pkt_len);
    if (d.lossy && d.rng.chance(d.loss_p32)) {
      rte_pktmbuf_free(m);
      ++*lost;
      continue;
    }
    if (k == 0) {
      *first_due = due;
      *first = m;
    }
    kept[k++] = LinkSlot{m, due};
  }
  d.ring.put(kept, k);
  return take;
}

unsigned link_receive(LinkDirection& d, uint64_t now_ns, rte_mbuf** pkts, unsigned n,
                      LatencyHistogram& lateness) {
  unsigned out = 0;
  while (out < n) {
    const LinkSlot* s = d.ring.front();
    if (s == nullptr || s->due_ns > now_ns) break;
    lateness.record(now_ns - s->due_ns);
    pkts[out++] = static_cast<rte_mbuf*>(s->frame);
    d.ring.pop();
  }
  return out;
}

uint64_t link_next_due(LinkDirection& d) {
  const LinkSlot* s = d.ring.front();
  return s != nullptr ? s->due_ns : UINT64_MAX;
}

unsigned link_discard(LinkDirection& d) {
  unsigned freed = 0;
  for (const LinkSlot* s; (s = d.ring.front()) != nullptr; d.ring.pop(), ++freed)
    rte_pktmbuf_free(static_cast<rte_mbuf*>(s->frame));
  return freed;
}

}  // namespace

unsigned LinkMedium::receive(uint64_t now, rte_mbuf** pkts, unsigned n) {
  return link_receive(in_, now, pkts, n, lateness_);
}

unsigned LinkMedium::send(uint64_t, rte_mbuf** pkts, unsigned n, SendNotes* notes) {
  const unsigned taken = link_send(out_, tx_ns_, pkts, notes->dequeued, n, &notes->lost,
                                   &notes->first_arrival, &notes->first_frame);
  notes->far_port = out_.rx_port;
  return taken;
}

// Exact time is never late: frames start now. In real time the frames
// start where the wire fell free when the loop came back late, counting
// idle time beyond the catch-up window as lost.
void LinkMedium::begin_transmit(uint64_t now, bool exact, EgressPort& tm) {
  if (exact) {
    tx_ns_ = now;
    return;
  }
  const uint64_t free_ns = out_.timing.wire_free_ns();
  uint64_t start = now;
  if (waiting_ && free_ns < now) {
    const uint64_t floor = now > kLinkCatchUpNs ? now - kLinkCatchUpNs : 0;
    start = std::max(free_ns, floor);
    const uint64_t idle_from = std::max(free_ns, checked_ns_);
    if (idle_from < floor) tm.add_lost_transmit_ns(floor - idle_from);
  }
  checked_ns_ = now;
  tx_ns_ = start;
}

// Exact time: a link takes one frame once its wire is free, as a real port
// does; the traffic manager holds the rest (its queue is what a switch
// sees). Real time: serialisation may be committed up to fifo_ns beyond now
// (the transmit FIFO past the scheduler), so that a pause stops what is
// still queued rather than a shaper bucket's worth.
unsigned LinkMedium::room(uint64_t now, bool exact) {
  if (exact) return out_.timing.wire_free_ns() <= now ? 1 : 0;
  if (out_.fifo_ns == 0) return kMaxBurst;
  const uint64_t from = std::max(out_.timing.wire_free_ns(), tx_ns_);
  if (from >= now + out_.fifo_ns) return 0;
  const uint64_t frame_ns = out_.timing.serialisation_ns(mtu_ + kEthHeaderLen);
  if (frame_ns == 0) return kMaxBurst;
  return static_cast<unsigned>(
      std::min<uint64_t>(kMaxBurst, (now + out_.fifo_ns - from) / frame_ns + 1));
}

uint64_t LinkMedium::next_rx_ns(uint64_t) { return link_next_due(in_); }

uint32_t LinkMedium::discard_in_flight() { return link_discard(in_); }

}  // namespace sluice
