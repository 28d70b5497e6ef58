#pragma once
// Per-lcore, per-port counters. Each worker lcore owns one PortCounters per
// port of the process and is its only writer; the metrics scraper, telemetry
// and the summary sum them over lcores when asked (nothing is shared on the
// packet path). Each starts a cache line, so the eight counters every
// packet moves share one.

#include <cstdint>

#include "lib/common/drop_reason.h"
#include "lib/common/relaxed_counter.h"

namespace sluice {

struct alignas(64) PortCounters {
  RelaxedCounter rx_packets;
  RelaxedCounter rx_bytes;
  RelaxedCounter tx_packets;
  RelaxedCounter tx_bytes;
  RelaxedCounter tx_generated_packets;  // built by sluice (ARP, control)
  RelaxedCounter rx_consumed_packets;   // used by sluice, not forwarded
  RelaxedCounter forwarded_packets;     // handed to this port's egress admission
  RelaxedCounter ecn_marks;
  RelaxedCounter link_lost;     // internal link: transmitted, lost on the wire
  RelaxedCounter control_lost;  // built, but no mbuf or no room on a ring / queue
  RelaxedCounter drops[kDropReasonCount];

  void drop(DropReason r) { drops[static_cast<unsigned>(r)].add(); }
};

// Totals of one port summed over lcores; plain values for reporting.
struct PortTotals {
  uint64_t rx_packets = 0, rx_bytes = 0, tx_packets = 0, tx_bytes = 0;
  uint64_t tx_generated_packets = 0, rx_consumed_packets = 0, forwarded_packets = 0;
  uint64_t ecn_marks = 0;
  uint64_t link_lost = 0;
  uint64_t control_lost = 0;
  uint64_t drops[kDropReasonCount] = {};

  void add(const PortCounters& c) {
    rx_packets += c.rx_packets.get();
    rx_bytes += c.rx_bytes.get();
    tx_packets += c.tx_packets.get();
    tx_bytes += c.tx_bytes.get();
    tx_generated_packets += c.tx_generated_packets.get();
    rx_consumed_packets += c.rx_consumed_packets.get();
    forwarded_packets += c.forwarded_packets.get();
    ecn_marks += c.ecn_marks.get();
    link_lost += c.link_lost.get();
    control_lost += c.control_lost.get();
    for (unsigned i = 0; i < kDropReasonCount; ++i) drops[i] += c.drops[i].get();
  }
  uint64_t total_drops() const {
    uint64_t s = 0;
    for (uint64_t d : drops) s += d;
    return s;
  }
};

}  // namespace sluice
