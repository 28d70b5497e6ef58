#pragma once
// One egress port's queue under pFabric's switch rules ("pFabric: Minimal
// Near-Optimal Datacenter Transport", Alizadeh et al., SIGCOMM 2013,
// section 4.1; docs/transports.md "pFabric"). Every packet carries a rank,
// its flow's remaining bytes (smaller = higher priority):
//   - service: the next packet sent is the earliest-queued packet of the
//     flow that holds the smallest rank among queued packets (not that
//     packet itself: a flow's packets leave in order and a flow whose later
//     packets rank higher does not starve its own head);
//   - admission: a packet that does not fit in the port's small buffer makes
//     room by dropping the lowest-priority packet among those queued and the
//     arriving one (the largest rank; among equal ranks the latest arrival),
//     repeatedly, until it fits or is itself the one dropped.
// The buffer is small (about two bandwidth-delay products, tens of packets),
// so both rules are linear scans over the queued packets in arrival order,
// as the paper argues a hardware switch can afford at that size. Plain C++:
// time is an argument, nothing is allocated after construction (entries are
// sized for capacity_bytes of minimum 60-byte frames, at most kMaxPackets).

#include <cstdint>
#include <memory>

#include "lib/tm/tm_packet.h"

namespace sluice {

class PfabricQueue {
 public:
  static constexpr uint32_t kMinFrameBytes = 60;  // an Ethernet frame without FCS, at least
  // Packets held at most, whatever the bytes: the scans are meant for tens
  // of packets, and 4096 minimum frames are 240 KB, above two BDPs of a
  // 100 Gb/s link at an 8 us RTT.
  static constexpr uint32_t kMaxPackets = 4096;

  // capacity_bytes: the port's buffer; it holds at most capacity_bytes / 60
  // packets (at least one, at most kMaxPackets), whatever their size.
  explicit PfabricQueue(uint64_t capacity_bytes);

  // Admits pkt (rank: remaining bytes, smaller = higher priority; flow: a
  // flow key; pkt.enqueue_ns set to now_ns). When pkt does not fit, the
  // lowest-priority packet among those queued and pkt (largest rank; among
  // equal ranks the latest arrival) is dropped, repeatedly, until pkt fits
  // or pkt itself is the one dropped. Dropped queued packets are written to
  // evicted[0..*n_evicted) (at most max_evicted: when that many have gone
  // and pkt still does not fit, pkt is dropped). Returns false if pkt itself
  // was dropped (then it is not queued). A packet larger than the whole
  // buffer is dropped without evicting anything.
  bool enqueue(uint64_t now_ns, const TmPacket& pkt, uint64_t flow, uint32_t rank,
               TmPacket* evicted, unsigned max_evicted, unsigned* n_evicted);
  // The next packet to send: the earliest-queued packet of the flow that
  // holds the smallest rank among queued packets (of equal smallest ranks,
  // the earliest-queued one's flow). False when empty.
  bool dequeue(TmPacket* out);

  uint64_t bytes() const { return bytes_; }
  uint32_t packets() const { return count_; }
  uint64_t capacity_bytes() const { return capacity_; }
  uint32_t max_packets() const { return max_entries_; }

  // Hands every queued packet to fn (arrival order) and empties the queue:
  // for shutdown.
  template <class F>
  void drain(F&& fn) {
    for (uint32_t i = 0; i < count_; ++i) fn(static_cast<const TmPacket&>(entries_[i].pkt));
    count_ = 0;
    bytes_ = 0;
  }

 private:
  struct Entry {
    TmPacket pkt;
    uint64_t flow;
    uint32_t rank;
  };
  bool fits(uint32_t frame_bytes) const {
    return count_ < max_entries_ && bytes_ + frame_bytes <= capacity_;
  }
  uint32_t lowest_priority() const;  // index of the entry admission drops first
  void erase(uint32_t i);

  uint64_t capacity_;
  uint32_t max_entries_;
  std::unique_ptr<Entry[]> entries_;  // entries_[0..count_) in arrival order
  uint32_t count_ = 0;
  uint64_t bytes_ = 0;
};

}  // namespace sluice
