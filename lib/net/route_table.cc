#include "lib/net/route_table.h"

#include <algorithm>

#include "lib/net/mac_addr.h"

namespace sluice {

bool RouteTable::add(Ipv4Prefix prefix, std::vector<uint16_t> ports, std::string* error) {
  const std::string name = format_ipv4(prefix.addr) + "/" + std::to_string(prefix.len);
  if (prefix.len > 32) {
    *error = "route " + name + ": prefix length over 32";
    return false;
  }
  if ((prefix.addr & ~prefix_mask(prefix.len)) != 0) {
    *error = "route " + name + ": host bits set";
    return false;
  }
  if (ports.empty()) {
    *error = "route " + name + ": no next-hop ports";
    return false;
  }
  std::sort(ports.begin(), ports.end());
  if (std::adjacent_find(ports.begin(), ports.end()) != ports.end()) {
    *error = "route " + name + ": a port is listed twice";
    return false;
  }
  auto& table = by_length_[prefix.len];
  if (table.contains(prefix.addr)) {
    *error = "route " + name + ": duplicate prefix";
    return false;
  }
  auto [it, inserted] = group_ids_.try_emplace(ports, static_cast<int>(groups_.size()));
  if (inserted) groups_.push_back(NextHopGroup{std::move(ports)});
  table.emplace(prefix.addr, it->second);
  lengths_present_ |= uint64_t{1} << prefix.len;
  entries_.push_back(Entry{prefix, it->second});
  return true;
}

int RouteTable::lookup(uint32_t dst_ip) const {
  uint64_t lengths = lengths_present_;
  while (lengths != 0) {
    const unsigned len = 63 - static_cast<unsigned>(__builtin_clzll(lengths));
    const auto& table = by_length_[len];
    if (auto it = table.find(dst_ip & prefix_mask(len)); it != table.end()) return it->second;
    lengths &= ~(uint64_t{1} << len);
  }
  return -1;
}

}  // namespace sluice
