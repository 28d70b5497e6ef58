#pragma once
// The routing model: IPv4 prefixes to next-hop groups (ECMP port sets), with a
// reference longest-prefix match. switch/ loads the same entries into rte_lpm
// for speed; tests compare the two against this one.

#include <array>
#include <cstdint>
#include <map>
#include <string>
#include <unordered_map>
#include <vector>

#include "lib/config/config.h"

namespace sluice {

// Port indices within the switch, sorted ascending and distinct, so the ECMP
// member ecmp_pick(hash, n) = i is always the i-th smallest port index.
struct NextHopGroup {
  std::vector<uint16_t> ports;
};

class RouteTable {
 public:
  // Returns false (and sets *error) on duplicate prefix, empty group, a port
  // listed twice, host bits set or a length over 32. Port order does not
  // matter: identical port sets share one group id.
  bool add(Ipv4Prefix prefix, std::vector<uint16_t> ports, std::string* error);

  // Longest-prefix match; -1 when no route. Per-length hash maps, longest
  // first, skipping lengths with no routes.
  int lookup(uint32_t dst_ip) const;

  const NextHopGroup& group(int id) const { return groups_[static_cast<size_t>(id)]; }
  size_t group_count() const { return groups_.size(); }

  struct Entry {
    Ipv4Prefix prefix;
    int group;
  };
  // In the order they were added.
  const std::vector<Entry>& entries() const { return entries_; }

 private:
  std::array<std::unordered_map<uint32_t, int>, 33> by_length_;  // addr -> group
  uint64_t lengths_present_ = 0;                                 // bit L: a /L route exists
  std::vector<NextHopGroup> groups_;
  std::map<std::vector<uint16_t>, int> group_ids_;
  std::vector<Entry> entries_;
};

}  // namespace sluice
