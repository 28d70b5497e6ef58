#pragma once
// A two-tier leaf-spine fabric for Flowtune's full-path model (SPEC 4.5:
// "a full-path model is used when the fabric's paths are known"): host
// up/down links plus, per (leaf, spine) pair, a leaf → spine and a spine →
// leaf link. A flow between hosts on one leaf crosses [up(src), down(dst)];
// otherwise [up(src), leaf_up(leaf(src), spine), spine_down(spine,
// leaf(dst)), down(dst)]. The spine is the caller's choice (its ECMP hash):
// Flowtune allocates along paths the network selected (paper §1, §6).

#include <cstdint>

#include "lib/mechanisms/flowtune/flow_path.h"
#include "lib/mechanisms/flowtune/ned_allocator.h"

namespace sluice::flowtune {

struct LeafSpineShape {
  uint32_t leaves = 0;
  uint32_t spines = 0;
  uint32_t hosts_per_leaf = 0;
  double host_capacity = 1;
  double fabric_capacity = 1;  // each leaf-spine link, each direction
};

class LeafSpine {
 public:
  // Adds all links to `alloc`; ok() is false when it had no room.
  LeafSpine(NedAllocator& alloc, const LeafSpineShape& shape);

  bool ok() const { return ok_; }
  uint32_t hosts() const { return shape_.leaves * shape_.hosts_per_leaf; }
  uint32_t leaf_of(uint32_t host) const { return host / shape_.hosts_per_leaf; }
  LinkId up(uint32_t host) const { return base_ + 2 * host; }
  LinkId down(uint32_t host) const { return base_ + 2 * host + 1; }
  LinkId leaf_up(uint32_t leaf, uint32_t spine) const {
    return fabric_base() + 2 * (leaf * shape_.spines + spine);
  }
  LinkId spine_down(uint32_t spine, uint32_t leaf) const { return leaf_up(leaf, spine) + 1; }
  // Empty path for an unknown host or spine.
  FlowPath path(uint32_t src, uint32_t dst, uint32_t spine) const;

 private:
  LinkId fabric_base() const { return base_ + 2 * hosts(); }

  LeafSpineShape shape_;
  LinkId base_ = 0;
  bool ok_ = true;
};

}  // namespace sluice::flowtune
