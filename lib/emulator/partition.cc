#include "lib/emulator/partition.h"

#include <algorithm>
#include <map>
#include <optional>
#include <utility>

#include "lib/emulator/link/link_timing.h"

namespace sluice {

std::vector<unsigned> emulator_partition(const Config& config, unsigned workers) {
  std::vector<unsigned> out;
  if (workers == 0) return out;
  size_t ports = 0;
  for (const SwitchConfig& sw : config.switches) ports += sw.ports.size();
  size_t placed = 0;
  for (const SwitchConfig& sw : config.switches) {
    // The run a switch falls in by where its middle port would be.
    unsigned slot = static_cast<unsigned>(
        std::min<size_t>(workers - 1, (placed + sw.ports.size() / 2) * workers / std::max<size_t>(1, ports)));
    if (sw.flowtune.enabled && config.flowtune_allocator.enabled) slot = 0;
    for (size_t i = 0; i < sw.ports.size(); ++i) out.push_back(slot);
    placed += sw.ports.size();
  }
  return out;
}

std::vector<unsigned> partition_of_workers(const Config& config, std::string* error) {
  std::map<std::pair<std::string, std::string>, size_t> index;
  for (const SwitchConfig& sw : config.switches) {
    for (const PortConfig& p : sw.ports) index.emplace(std::make_pair(sw.name, p.name), index.size());
  }
  constexpr unsigned kUnplaced = ~0u;
  std::vector<unsigned> slots(index.size(), kUnplaced);
  for (size_t w = 0; w < config.workers.size(); ++w) {
    for (const PortRef& ref : config.workers[w].ports) {
      const auto it = index.find({ref.sw, ref.port});
      if (it == index.end()) {
        *error = "workers: unknown port " + ref.sw + "/" + ref.port;
        return {};
      }
      if (slots[it->second] != kUnplaced) {
        *error = "workers: port " + ref.sw + "/" + ref.port + " is placed twice";
        return {};
      }
      slots[it->second] = static_cast<unsigned>(w);
    }
  }
  for (const SwitchConfig& sw : config.switches) {
    for (const PortConfig& p : sw.ports) {
      if (slots[index[{sw.name, p.name}]] == kUnplaced) {
        *error = "workers: port " + sw.name + "/" + p.name + " is on no worker lcore";
        return {};
      }
    }
  }
  return slots;
}

PartitionCheck check_partition(const Config& config, const std::vector<unsigned>& slots) {
  PartitionCheck r;
  std::map<std::pair<std::string, std::string>, size_t> index;  // (switch, port) -> port
  std::vector<const PortConfig*> port_of;
  std::vector<const SwitchConfig*> switch_of;
  for (const SwitchConfig& sw : config.switches) {
    for (const PortConfig& p : sw.ports) {
      index[{sw.name, p.name}] = port_of.size();
      port_of.push_back(&p);
      switch_of.push_back(&sw);
    }
  }
  if (slots.size() != port_of.size()) {
    r.error = "the partition names " + std::to_string(slots.size()) + " ports, the fabric has " +
              std::to_string(port_of.size());
    return r;
  }
  std::optional<unsigned> flowtune_slot;
  for (size_t i = 0; i < port_of.size(); ++i) {
    const SwitchConfig& sw = *switch_of[i];
    const size_t first = index[{sw.name, sw.ports.front().name}];
    if (slots[i] != slots[first]) {
      r.error = "switch " + sw.name + " is split across worker lcores (" + sw.ports.front().name +
                " and " + port_of[i]->name +
                "): in fabric time a switch and its ports run on one lcore";
      return r;
    }
    if (sw.flowtune.enabled && config.flowtune_allocator.enabled) {
      if (flowtune_slot && *flowtune_slot != slots[i]) {
        r.error = "switch " + sw.name +
                  " is a Flowtune edge on another worker lcore than the others: the allocator in "
                  "the fabric and its edges run on one lcore";
        return r;
      }
      flowtune_slot = slots[i];
    }
  }
  for (size_t i = 0; i < port_of.size(); ++i) {
    const PortConfig& p = *port_of[i];
    if (p.link_peer.empty()) continue;
    const size_t slash = p.link_peer.find('/');
    auto it = index.find({p.link_peer.substr(0, slash), p.link_peer.substr(slash + 1)});
    if (it == index.end() || slots[it->second] == slots[i]) continue;
    ++r.cross_links;
    // The earliest a frame sent now can arrive: the delay, after the
    // serialisation of the smallest frame there could be (no bytes but the
    // wire's own overhead: a bound, whatever frames the fabric sends).
    const LinkTiming t(p.rate_bps, p.wire_overhead_bytes, p.link_delay_ns);
    const uint64_t ahead = p.link_delay_ns + t.serialisation_ns(0);
    if (ahead < kMinLookaheadNs) {
      r.error = "the link " + switch_of[i]->name + "/" + p.name + " -> " + p.link_peer +
                " crosses worker lcores with a lookahead of " + std::to_string(ahead) +
                " ns (delay + the smallest frame's serialisation), under the " +
                std::to_string(kMinLookaheadNs) +
                " ns a window needs: keep its two switches on one lcore";
      return r;
    }
    r.lookahead_ns = std::min(r.lookahead_ns, ahead);
  }
  return r;
}

}  // namespace sluice
