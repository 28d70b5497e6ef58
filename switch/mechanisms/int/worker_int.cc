// INT's departure step (HPCC: High Precision Congestion Control, section
// 3.2): a transport data frame that asks for in-band telemetry gets this
// egress port's record: the departure instant, the data bytes the port sent
// before it, the bytes queued at the port, and its rate. The rule and the
// record's layout are lib/mechanisms/int/int_stamp.h.

#include "lib/mechanisms/int/int_stamp.h"
#include "switch/path/worker.h"

namespace sluice {

void Worker::int_departure(PortRuntime& port, const TmPacket& p, uint64_t now) {
  rte_mbuf* m = static_cast<rte_mbuf*>(p.handle);
  uint8_t* frame = rte_pktmbuf_mtod(m, uint8_t*);
  const uint32_t l3 = ipv4_offset(frame, m->data_len);
  const IntHop hop{now, port.int_tx_bytes, static_cast<uint32_t>(port.tm->queued_bytes()),
                   static_cast<uint32_t>(port.cfg->rate_bps / 1'000'000)};
  port.int_tx_bytes += p.bytes;
  if (l3 == 0) return;
  switch (stamp_int(frame + l3, m->data_len - l3, hop)) {
    case IntStamp::kStamped:
      counters(port.index).int_stamped.add();
      return;
    case IntStamp::kFull:
      counters(port.index).int_full.add();
      return;
    case IntStamp::kNotAsked:
      return;
  }
}

}  // namespace sluice
