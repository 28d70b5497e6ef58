#include "lib/mechanisms/bfc/flow_table.h"

#include <stdexcept>

namespace sluice {

FlowTable::FlowTable(std::span<const bool> egress_ports, uint32_t queues_per_port, uint32_t factor)
    : num_ports_(static_cast<uint32_t>(egress_ports.size())) {
  const uint64_t slice = static_cast<uint64_t>(queues_per_port) * factor;
  uint64_t size = 0;
  base_ = std::make_unique<uint32_t[]>(num_ports_);
  for (uint32_t p = 0; p < num_ports_; ++p) {
    base_[p] = egress_ports[p] ? static_cast<uint32_t>(size) : kNoSlice;
    if (egress_ports[p]) size += slice;
    if (size >= kNoSlice) break;
  }
  if (slice == 0 || size == 0 || size >= kNoSlice)
    throw std::invalid_argument(
        "flow table: factor x queues per port x egress ports must be in 1..2^32-2");
  slice_ = static_cast<uint32_t>(slice);
  slice_magic_ = UINT64_MAX / slice_ + 1;
  size_ = static_cast<uint32_t>(size);
  entries_ = std::make_unique<FlowEntry[]>(size_);
}

}  // namespace sluice
