// TCD's steps in a worker's loop (SPEC 4.4; docs/mechanisms/tcd.md, "In the
// data path"), on the lcore that owns the egress port:
//   - each pass, before the port's schedule: the queues its traffic manager
//     holds paused (PFC class, 802.3x PAUSE, BFC) turn the detectors OFF and
//     ON; a pause that ran out is ON again from its expiry;
//   - departure: every ECN-capable IPv4 data packet is marked from its
//     queue's state (CE or UE; never downgraded);
//   - timer: idle queues leave undetermined on time, and the time in each
//     state is settled for the scraper.
// The traffic manager's own ECN marking at enqueue is off on a TCD switch.

#include "lib/control/data_shim.h"
#include "lib/net/ethertypes.h"
#include "lib/net/ipv4_rewrite.h"
#include "switch/path/worker.h"

namespace sluice {

void Worker::tcd_track_pauses(PortRuntime& port, uint64_t now) {
  const EgressPort& tm = *port.tm;
  port.tcd->track_pauses(tm.paused_queues(now), now, [&](unsigned q, uint64_t since) {
    return tm.pause_ended_ns(static_cast<uint16_t>(q), since, now);
  });
}

// The packet has left its queue (the bytes it left behind are the queue's
// now, after the whole burst it left in).
void Worker::tcd_departure(PortRuntime& port, const TmPacket& p, uint64_t now) {
  rte_mbuf* m = static_cast<rte_mbuf*>(p.handle);
  const uint32_t l3 = data_l3_offset(port);
  uint8_t* ip = rte_pktmbuf_mtod(m, uint8_t*) + l3;
  const uint8_t ecn = ipv4_ecn(ip);
  const uint8_t out = port.tcd->mark(p.queue, now, port.tm->queue_bytes(p.queue), ecn);
  if (out != ecn) ipv4_set_ecn(ip, out);
}

void Worker::tcd_timer(PortRuntime& port, uint64_t now) {
  const EgressPort& tm = *port.tm;
  port.tcd->tick(now, [&](unsigned q) { return tm.queue_bytes(static_cast<uint16_t>(q)); });
}

}  // namespace sluice
