#include "lib/emulator/hosts/transport_check.h"

#include <unordered_map>

#include "lib/net/mac_addr.h"

namespace sluice {

std::vector<TransportHostPort> transport_host_ports(const Config& c) {
  std::vector<TransportHostPort> out;
  for (size_t s = 0; s < c.switches.size(); ++s) {
    for (size_t p = 0; p < c.switches[s].ports.size(); ++p) {
      const PortConfig& port = c.switches[s].ports[p];
      if (is_transport_host_port(c, port) && port.peer_ipv4) out.push_back({s, p, *port.peer_ipv4});
    }
  }
  return out;
}

bool check_transport_flows(const Config& c, std::vector<FlowListEntry>* flows,
                           std::vector<ConfigError>* errors) {
  if (c.transport.kind == TransportKind::kNone) return true;
  std::string err;
  ConfigError e;
  e.file = c.file;
  e.line = c.transport.line;
  e.key = "transport.flows";
  if (!read_flow_list(c.transport.flows_path, flows, &err)) {
    e.message = err;
    errors->push_back(e);
    return false;
  }
  std::unordered_map<uint32_t, bool> hosts;
  for (const TransportHostPort& h : transport_host_ports(c)) hosts[h.ip] = true;
  const size_t before = errors->size();
  for (const FlowListEntry& f : *flows) {
    for (const auto& [ip, what] :
         {std::pair{f.src_ip, "source"}, std::pair{f.dst_ip, "destination"}}) {
      if (hosts.count(ip) != 0) continue;
      e.message = c.transport.flows_path + ":" + std::to_string(f.line) + ": flow " +
                  std::to_string(f.id) + ": " + what + " " + format_ipv4(ip) +
                  " is not a transport host (the peer_ip of a capture-file host port without "
                  "an rx capture)";
      errors->push_back(e);
      if (errors->size() - before >= 10) return false;  // enough to see the pattern
    }
  }
  return errors->size() == before;
}

}  // namespace sluice
