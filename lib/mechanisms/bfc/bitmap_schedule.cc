#include "lib/mechanisms/bfc/bitmap_schedule.h"

#include <stdexcept>

namespace sluice {

BitmapSchedule::BitmapSchedule(std::span<const bool> switch_facing, uint64_t interval_ns,
                               uint64_t first_ns)
    : num_ports_(static_cast<uint32_t>(switch_facing.size())), interval_ns_(interval_ns) {
  if (interval_ns == 0) throw std::invalid_argument("bfc bitmap interval must be > 0");
  due_ns_ = std::make_unique<uint64_t[]>(num_ports_);
  for (uint32_t p = 0; p < num_ports_; ++p) {
    due_ns_[p] = switch_facing[p] ? sat_add(first_ns, interval_ns) : UINT64_MAX;
    if (due_ns_[p] < next_due_ns_) next_due_ns_ = due_ns_[p];
  }
}

}  // namespace sluice
