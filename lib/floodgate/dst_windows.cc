#include "lib/floodgate/dst_windows.h"

#include <algorithm>
#include <cmath>

namespace sluice {

uint32_t initial_window_bytes(uint64_t rate_bps, uint64_t hop_rtt_ns, double alpha,
                              uint64_t credit_interval_ns) {
  const double bdp = static_cast<double>(rate_bps) * static_cast<double>(hop_rtt_ns) / 8e9;
  const double during_t =
      static_cast<double>(rate_bps) * static_cast<double>(credit_interval_ns) / 8e9;
  const double bytes = std::floor(alpha * bdp + during_t);
  return bytes >= 4294967295.0 ? UINT32_MAX : static_cast<uint32_t>(bytes);
}

DstWindows::DstWindows(uint32_t max_destinations) : table_(max_destinations) {}

DstWindow* DstWindows::find(uint32_t dst) { return table_.find(kSwitch, dst, false); }

const DstWindow* DstWindows::find(uint32_t dst) const { return table_.find(kSwitch, dst); }

DstWindow* DstWindows::find_or_add(uint32_t dst, uint32_t initial) {
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

void DstWindows::debit(DstWindow& w, uint32_t bytes) {
  if (w.window == static_cast<int64_t>(w.initial)) in_use_.add();
  w.window -= bytes;
  outstanding_.add(bytes);
}

uint32_t DstWindows::credit(uint32_t dst, uint32_t bytes) {
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
