#include "lib/mechanisms/flowtune/one_big_switch.h"

namespace sluice::flowtune {

OneBigSwitch::OneBigSwitch(NedAllocator& alloc, uint32_t hosts, double host_capacity)
    : hosts_(hosts), base_(alloc.link_count()) {
  // Links are consecutive ids from base_, so up()/down() need no table.
  for (uint32_t i = 0; i < 2 * hosts; ++i) {
    if (alloc.add_link(host_capacity) == kInvalidLink) {
      ok_ = false;
      return;
    }
  }
}

FlowPath OneBigSwitch::path(uint32_t src, uint32_t dst) const {
  FlowPath p;
  if (!ok_ || src >= hosts_ || dst >= hosts_) return p;
  p.push(up(src));
  p.push(down(dst));
  return p;
}

}  // namespace sluice::flowtune
