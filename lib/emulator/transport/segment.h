#pragma once
// What an emulated host's transport sends and receives, independent of the
// wire: a data segment, or an ACK, NACK or CNP about one flow. The host
// (lib/emulator/hosts/) turns segments into frames and back (segment_wire.h,
// docs/wire-formats.md "Transport frames"); the transports never see bytes.

#include <array>
#include <cstdint>

#include "lib/net/ipv4_rewrite.h"

namespace sluice {

enum class SegmentKind : uint8_t {
  kData = 1,
  kAck = 2,   // cumulative: every byte below `seq` has arrived
  kNack = 3,  // go-back-N: a gap; every byte below `seq` arrived, resend from `seq`
  kCnp = 4,   // DCQCN congestion notification (no sequence number)
};

// The IP ECN codepoints (kEcnNotEct, kEcnEct0, kEcnEct1, kEcnCe) are
// lib/net/ipv4_rewrite.h's; TCD marks UE as ECT(1) (docs/mechanisms/tcd.md).
inline constexpr uint8_t kEcnUe = kEcnEct1;

// One switch hop's in-band telemetry, stamped at departure (HPCC section 3.2
// and its Fig. 4: the egress port's timestamp, queue length, transmitted
// bytes and link rate).
struct IntHop {
  uint64_t ts_ns = 0;       // departure instant, fabric clock
  uint64_t tx_bytes = 0;    // the egress port's bytes transmitted before this packet
  uint32_t qlen_bytes = 0;  // the egress port's queued bytes at departure
  uint32_t rate_mbps = 0;   // the egress port's link rate
};
constexpr uint32_t kMaxIntHops = 5;

// What every segment carries. Apart from the INT records (Segment, below)
// so that a segment without them (all but HPCC's) is read, written and
// copied within one cache line, even behind an 8-byte field of its own
// (the hosts' inbox and reply rings).
struct SegmentHead {
  SegmentKind kind = SegmentKind::kData;
  uint32_t flow = 0;   // the flow list's flow id
  uint64_t seq = 0;    // kData: offset of the first payload byte; kAck/kNack: next byte expected
  uint32_t bytes = 0;  // kData: payload bytes; 0 otherwise
  uint8_t ecn = kEcnEct0;    // kData as received: its IP ECN codepoint
  bool ece = false;          // kAck/kNack: ECN echo (TCP ECE, DCTCP's per-ACK CE state)
  bool ue_echo = false;      // kAck/kNack: the acknowledged data arrived UE-marked (TCD)
  bool int_request = false;  // kData: switches stamp INT hops into it (HPCC)
  uint64_t ts_ns = 0;    // kData: when the sender sent it; kAck/kNack: that of the data it answers
  uint8_t int_hops = 0;  // records in Segment::hops
  // pFabric's priority ("pFabric: Minimal Near-Optimal Datacenter
  // Transport", section 4): with has_rank the frame carries `rank`,
  // smaller = higher priority; data: its flow's remaining bytes. Without
  // one, pFabric switches take the frame as lowest priority.
  bool has_rank = false;
  // A selective acknowledgement (kAck), with has_sack: bytes [sack_start,
  // sack_end) above `seq` have arrived (the block of the data segment that
  // caused the ACK).
  bool has_sack = false;
  uint32_t rank = 0;
  uint64_t sack_start = 0;
  uint64_t sack_end = 0;
};
static_assert(sizeof(SegmentHead) <= 56, "a segment's head fits a line behind 8 bytes");

struct Segment : SegmentHead {
  std::array<IntHop, kMaxIntHops> hops{};  // kData: as stamped; kAck: echoed
};

// A segment made afresh: Segment{} but for the INT records, which nothing
// reads past int_hops (0). A maker that stamps records sets int_hops and
// writes them.
inline void reset_segment(Segment* s) { static_cast<SegmentHead&>(*s) = SegmentHead{}; }

// Copies what a reader of `from` reads: its head, and its INT records up
// to int_hops (nothing reads those past it).
inline void copy_segment(Segment* to, const Segment& from) {
  static_cast<SegmentHead&>(*to) = from;
  for (uint32_t i = 0; i < from.int_hops; ++i) to->hops[i] = from.hops[i];
}

}  // namespace sluice
