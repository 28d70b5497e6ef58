#include "lib/mechanisms/floodgate/dst_windows.h"

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

}  // namespace sluice
