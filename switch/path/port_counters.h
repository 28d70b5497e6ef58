#pragma once
// Per-lcore, per-port counters. Each worker lcore owns one PortCounters per
// port of the process and is its only writer; the metrics scraper, telemetry
// and the summary sum them over lcores when asked (nothing is shared on the
// packet path).

#include <cstdint>

#include "lib/common/drop_reason.h"
#include "lib/common/relaxed_counter.h"
#include "lib/control/control_frame.h"

namespace sluice {

// Names of the BFC frame types, in the order of PortCounters::bfc_sent.
inline constexpr const char* kBfcFrameTypes[3] = {"pause", "resume", "bitmap"};

// Index of a BFC frame type in PortCounters::bfc_sent / bfc_received.
inline unsigned bfc_frame_index(ControlType t) { return static_cast<unsigned>(t) - 3; }

// Names of the Floodgate frame types, in the order of PortCounters::fg_sent.
inline constexpr const char* kFgFrameTypes[3] = {"credit", "dst_pause", "sync"};

// Index of a Floodgate frame type in PortCounters::fg_sent / fg_received.
inline unsigned fg_frame_index(ControlType t) {
  return t == ControlType::kFgCredit ? 0 : t == ControlType::kFgDstPause ? 1 : 2;
}

struct PortCounters {
  RelaxedCounter rx_packets;
  RelaxedCounter rx_bytes;
  RelaxedCounter tx_packets;
  RelaxedCounter tx_bytes;
  RelaxedCounter tx_generated_packets;  // built by sluice (ARP, control)
  RelaxedCounter rx_consumed_packets;   // used by sluice, not forwarded
  RelaxedCounter forwarded_packets;     // handed to this port's egress admission
  RelaxedCounter ecn_marks;
  RelaxedCounter link_lost;    // internal link: transmitted, lost on the wire
  RelaxedCounter int_stamped;  // INT records written into transport data frames
  RelaxedCounter int_full;     // frames that asked for INT with every hop slot filled
  // BFC frames by type (kBfcFrameTypes order): sent out of / received on the port.
  RelaxedCounter bfc_sent[3];
  RelaxedCounter bfc_received[3];
  // Floodgate frames by type (kFgFrameTypes order), the credit bytes the
  // credit frames carried, and the wire bytes of those sent (overhead).
  RelaxedCounter fg_sent[3];
  RelaxedCounter fg_received[3];
  RelaxedCounter fg_credit_sent_bytes;
  RelaxedCounter fg_credit_received_bytes;
  // Credit this switch owed the port's upstream and could not keep: the
  // port's pending list was full of destinations it could not send.
  RelaxedCounter fg_credit_lost_bytes;
  RelaxedCounter fg_control_tx_bytes;
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
  uint64_t int_stamped = 0, int_full = 0;
  uint64_t bfc_sent[3] = {}, bfc_received[3] = {};
  uint64_t fg_sent[3] = {}, fg_received[3] = {};
  uint64_t fg_credit_sent_bytes = 0, fg_credit_received_bytes = 0, fg_control_tx_bytes = 0;
  uint64_t fg_credit_lost_bytes = 0;
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
    int_stamped += c.int_stamped.get();
    int_full += c.int_full.get();
    for (unsigned i = 0; i < 3; ++i) {
      bfc_sent[i] += c.bfc_sent[i].get();
      bfc_received[i] += c.bfc_received[i].get();
      fg_sent[i] += c.fg_sent[i].get();
      fg_received[i] += c.fg_received[i].get();
    }
    fg_credit_sent_bytes += c.fg_credit_sent_bytes.get();
    fg_credit_received_bytes += c.fg_credit_received_bytes.get();
    fg_control_tx_bytes += c.fg_control_tx_bytes.get();
    fg_credit_lost_bytes += c.fg_credit_lost_bytes.get();
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
