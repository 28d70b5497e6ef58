#include "lib/mechanisms/flowtune/leaf_spine.h"

namespace sluice::flowtune {

LeafSpine::LeafSpine(NedAllocator& alloc, const LeafSpineShape& shape)
    : shape_(shape), base_(alloc.link_count()) {
  if (shape.hosts_per_leaf == 0 || shape.leaves == 0 || shape.spines == 0) {
    ok_ = false;
    return;
  }
  // Consecutive ids from base_: hosts (up, down), then (leaf, spine) pairs
  // (leaf_up, spine_down), so the accessors are arithmetic.
  for (uint32_t i = 0; i < 2 * hosts() && ok_; ++i) {
    ok_ = alloc.add_link(shape.host_capacity) != kInvalidLink;
  }
  for (uint32_t i = 0; i < 2 * shape.leaves * shape.spines && ok_; ++i) {
    ok_ = alloc.add_link(shape.fabric_capacity) != kInvalidLink;
  }
}

FlowPath LeafSpine::path(uint32_t src, uint32_t dst, uint32_t spine) const {
  FlowPath p;
  if (!ok_ || src >= hosts() || dst >= hosts() || spine >= shape_.spines) return p;
  p.push(up(src));
  if (leaf_of(src) != leaf_of(dst)) {
    p.push(leaf_up(leaf_of(src), spine));
    p.push(spine_down(spine, leaf_of(dst)));
  }
  p.push(down(dst));
  return p;
}

}  // namespace sluice::flowtune
