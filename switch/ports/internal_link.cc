#include "switch/ports/internal_link.h"

#include <rte_ring.h>

#include "switch/path/mbuf_meta.h"

namespace sluice {

unsigned link_send(LinkDirection& d, uint64_t now_ns, rte_mbuf** pkts, unsigned n, uint64_t* lost,
                   uint64_t* first_due) {
  // Only this lcore produces into the ring, so its free count cannot shrink
  // under us: due times are given only to frames that will be enqueued.
  const unsigned room = rte_ring_free_count(d.ring);
  const unsigned take = n < room ? n : room;
  rte_mbuf* kept[kBurst];
  unsigned k = 0;
  for (unsigned i = 0; i < take; ++i) {
    rte_mbuf* m = pkts[i];
    const uint64_t due = d.timing.depart(now_ns, m->pkt_len);
    if (d.loss_p32 != 0 && d.rng.chance(d.loss_p32)) {
      rte_pktmbuf_free(m);
      ++*lost;
      continue;
    }
    mbuf_extra(m)->due_ns = due;
    if (k == 0) *first_due = due;
    kept[k++] = m;
  }
  rte_ring_sp_enqueue_burst(d.ring, reinterpret_cast<void**>(kept), k, nullptr);
  return take;
}

unsigned link_receive(LinkDirection& d, LinkRxStage& stage, uint64_t now_ns, rte_mbuf** pkts,
                      unsigned n, LatencyHistogram& lateness) {
  unsigned out = 0;
  while (out < n) {
    if (stage.head == stage.count) {
      stage.head = 0;
      stage.count =
          rte_ring_sc_dequeue_burst(d.ring, reinterpret_cast<void**>(stage.pkts), kBurst, nullptr);
      if (stage.count == 0) break;
    }
    rte_mbuf* m = stage.pkts[stage.head];
    const uint64_t due = mbuf_extra(m)->due_ns;
    if (due > now_ns) break;
    lateness.record(now_ns - due);
    pkts[out++] = m;
    ++stage.head;
  }
  return out;
}

uint64_t link_next_due(LinkDirection& d, LinkRxStage& stage) {
  if (stage.head == stage.count) {
    stage.head = 0;
    stage.count =
        rte_ring_sc_dequeue_burst(d.ring, reinterpret_cast<void**>(stage.pkts), kBurst, nullptr);
    if (stage.count == 0) return UINT64_MAX;
  }
  return mbuf_extra(stage.pkts[stage.head])->due_ns;
}

unsigned link_discard(LinkDirection& d, LinkRxStage& stage) {
  unsigned freed = 0;
  for (; stage.head < stage.count; ++stage.head, ++freed) rte_pktmbuf_free(stage.pkts[stage.head]);
  void* m;
  while (rte_ring_sc_dequeue(d.ring, &m) == 0) {
    rte_pktmbuf_free(static_cast<rte_mbuf*>(m));
    ++freed;
  }
  return freed;
}

}  // namespace sluice
