#include "lib/bfc/flow_table.h"

#include <stdexcept>

namespace sluice {

FlowTable::FlowTable(uint32_t total_queues, uint32_t factor) {
  const uint64_t size = static_cast<uint64_t>(total_queues) * factor;
  if (size == 0 || size > UINT32_MAX)
    throw std::invalid_argument("flow table: factor x total queues must be in 1..2^32-1");
  size_ = static_cast<uint32_t>(size);
  entries_ = std::make_unique<FlowEntry[]>(size_);
}

}  // namespace sluice
