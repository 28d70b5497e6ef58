#pragma once
// The "one big switch" topology model of Flowtune (SPEC 4.5, default): the
// fabric is taken as non-blocking and only each host's up link (host →
// fabric) and down link (fabric → host) are allocated, so a flow src → dst
// crosses exactly [up(src), down(dst)]. The full-path model needs no helper:
// the caller passes a flow's real link list to NedAllocator::add_flow (see
// leaf_spine.h for a two-tier builder).

#include <cstdint>

#include "lib/mechanisms/flowtune/flow_path.h"
#include "lib/mechanisms/flowtune/ned_allocator.h"

namespace sluice::flowtune {

class OneBigSwitch {
 public:
  // Adds 2·hosts links to `alloc` (up then down per host, all at
  // `host_capacity`). ok() is false when the allocator had no room.
  OneBigSwitch(NedAllocator& alloc, uint32_t hosts, double host_capacity);

  bool ok() const { return ok_; }
  uint32_t hosts() const { return hosts_; }
  LinkId up(uint32_t host) const { return base_ + 2 * host; }
  LinkId down(uint32_t host) const { return base_ + 2 * host + 1; }
  // Empty path for an unknown host.
  FlowPath path(uint32_t src, uint32_t dst) const;

 private:
  uint32_t hosts_;
  LinkId base_ = 0;
  bool ok_ = true;
};

}  // namespace sluice::flowtune
