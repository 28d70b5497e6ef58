#pragma once
// Which data queue a packet joins. With kDscp the 64 DSCP values are spread
// evenly over the queues, higher DSCP to higher queue index (which is the
// higher priority under strict-priority scheduling).

#include <cstdint>

#include "lib/config/config.h"

namespace sluice {

inline uint16_t queue_for_dscp(uint8_t dscp, uint32_t num_queues) {
  return static_cast<uint16_t>((static_cast<uint32_t>(dscp & 0x3F) * num_queues) >> 6);
}

inline uint16_t queue_for_class(ClassMapping mapping, uint8_t dscp, uint32_t num_queues) {
  return mapping == ClassMapping::kDscp ? queue_for_dscp(dscp, num_queues) : 0;
}

}  // namespace sluice
