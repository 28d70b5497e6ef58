#pragma once
// A flow's path for the Flowtune allocator (SPEC 4.5): the ids of the links it
// crosses, in a fixed-capacity array so that a flow never owns heap memory
// and add/remove stay O(path length). Eight links cover a host-to-host path
// through a three-tier fabric; a two-tier leaf-spine path uses four.
// docs/mechanisms/flowtune.md ("NED and normalisation").

#include <array>
#include <cstdint>
#include <span>

namespace sluice::flowtune {

using LinkId = uint32_t;
using FlowId = uint32_t;
inline constexpr LinkId kInvalidLink = UINT32_MAX;
inline constexpr FlowId kInvalidFlow = UINT32_MAX;
inline constexpr uint32_t kMaxPathLinks = 8;

struct FlowPath {
  std::array<LinkId, kMaxPathLinks> links{};
  uint32_t size = 0;

  // False (path unchanged) when the path is already full.
  bool push(LinkId l) {
    if (size == kMaxPathLinks) return false;
    links[size++] = l;
    return true;
  }
  std::span<const LinkId> view() const { return {links.data(), size}; }
};

}  // namespace sluice::flowtune
