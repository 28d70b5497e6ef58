#include "lib/mechanisms/dibs/detour_admission.h"

#include <algorithm>

namespace sluice {

// Room of a queue holding b bytes: the packet must fit the free buffer and
// keep the queue within alpha x free, the threshold SharedBuffer applies.
uint64_t detour_room_bytes(const EgressPort& port, uint64_t now_ns) {
  if (port.port_paused(now_ns)) return 0;
  const SharedBuffer& buffer = port.buffer();
  const uint64_t used = buffer.used();
  const uint64_t free = used < buffer.capacity() ? buffer.capacity() - used : 0;
  const uint64_t threshold = buffer.threshold();
  uint64_t fullest = 0;
  for (uint16_t q = 0; q < port.num_queues(); ++q) {
    if (port.queue(q).full() || port.queue_paused(q, now_ns)) return 0;
    fullest = std::max(fullest, port.queue_bytes(q));
  }
  return fullest >= threshold ? 0 : std::min(free, threshold - fullest);
}

}  // namespace sluice
