#pragma once
// Floodgate's per-destination sending windows of one switch (SPEC 4.1
// "Window"; "Floodgate: Taming Incast in Datacenter Networks", section 2):
// one window per remote destination host, shared by every egress port, so
// that the bytes in flight toward a destination stay bounded whichever ECMP
// member carried them. A window starts at its initial value, is debited when
// a packet toward its destination is sent and credited when the downstream
// switch reports the packet gone; it never rises above the initial value.
//
// A window also records where its destination's held packets wait (VOQ
// index and bytes, kept by VoqPool). Entries are never removed: a window back
// at its initial value with nothing held behaves exactly as no entry. The
// table has a fixed capacity; when it is full a new destination gets no
// window (the caller sends its packets uncontrolled and counts them).
// Single writer; no allocation after construction.
// docs/mechanisms/floodgate.md ("Windows").

#include <algorithm>
#include <cstdint>
#include <vector>

#include "lib/common/relaxed_counter.h"
#include "lib/mechanisms/floodgate/port_dst_table.h"

namespace sluice {

inline constexpr uint32_t kNoVoq = UINT32_MAX;

// The initial window: alpha x BDP of the next hop (rate x hop RTT) plus what
// the egress sends during one credit interval T (C_out x T). Bytes, rounded
// down, at most UINT32_MAX.
uint32_t initial_window_bytes(uint64_t rate_bps, uint64_t hop_rtt_ns, double alpha,
                              uint64_t credit_interval_ns);

struct DstWindow {
  uint32_t dst = 0;          // IPv4, host order
  uint32_t initial = 0;      // bytes
  int64_t window = 0;        // bytes that may still be sent toward dst
  uint32_t voq = kNoVoq;     // the VOQ holding dst's waiting packets
  uint32_t voq_packets = 0;  // dst's packets in it
  uint64_t voq_bytes = 0;    // and their bytes
};

class DstWindows {
 public:
  // Room for max_destinations windows (>= 1).
  explicit DstWindows(uint32_t max_destinations);

  DstWindow* find(uint32_t dst);
  const DstWindow* find(uint32_t dst) const;
  // The window of dst, created at `initial` bytes on first use; nullptr when
  // the table is full (counted in table_full).
  DstWindow* find_or_add(uint32_t dst, uint32_t initial);

  bool may_send(const DstWindow& w, uint32_t bytes) const {
    return w.voq == kNoVoq && w.window >= static_cast<int64_t>(bytes);
  }
  void debit(DstWindow& w, uint32_t bytes);
  // Returns the bytes refused: credit for a destination without a window, or
  // what would lift a window above its initial value (counted in
  // invalid_credit_bytes, never added).
  uint32_t credit(uint32_t dst, uint32_t bytes);

  uint32_t capacity() const { return table_.capacity(); }
  // Gauges: windows below their initial value, and their summed shortfall
  // (the bytes in flight beyond this switch under window control).
  uint64_t in_use() const { return in_use_.get(); }
  uint64_t outstanding_bytes() const { return outstanding_.get(); }
  RelaxedCounter table_full;
  RelaxedCounter invalid_credit_bytes;

 private:
  static constexpr uint32_t kSwitch = 0;  // the table's one port: windows are per switch

  PortDstTable<DstWindow> table_;
  RelaxedCounter in_use_;
  RelaxedCounter outstanding_;
};

// Inline: admission and credit intake call these per packet and per entry.
inline DstWindow* DstWindows::find(uint32_t dst) { return table_.find(kSwitch, dst, false); }

inline const DstWindow* DstWindows::find(uint32_t dst) const { return table_.find(kSwitch, dst); }

inline DstWindow* DstWindows::find_or_add(uint32_t dst, uint32_t initial) {
  bool added = false;
  DstWindow* w = table_.find(kSwitch, dst, true, &added);
  if (w == nullptr) {
    table_full.add();
    return nullptr;
  }
  if (added) {
    w->dst = dst;
    w->initial = initial;
    w->window = initial;
  }
  return w;
}

inline void DstWindows::debit(DstWindow& w, uint32_t bytes) {
  if (w.window == static_cast<int64_t>(w.initial)) in_use_.add();
  w.window -= bytes;
  outstanding_.add(bytes);
}

inline uint32_t DstWindows::credit(uint32_t dst, uint32_t bytes) {
  DstWindow* w = find(dst);
  if (w == nullptr) {
    invalid_credit_bytes.add(bytes);
    return bytes;
  }
  const uint64_t room = static_cast<uint64_t>(static_cast<int64_t>(w->initial) - w->window);
  const uint32_t added = static_cast<uint32_t>(std::min<uint64_t>(bytes, room));
  if (added != 0) {
    w->window += added;
    outstanding_.sub(added);
    if (w->window == static_cast<int64_t>(w->initial)) in_use_.sub();
  }
  if (added != bytes) invalid_credit_bytes.add(bytes - added);
  return bytes - added;
}

}  // namespace sluice
