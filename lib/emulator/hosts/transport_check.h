#pragma once
// Which ports are transport hosts, and whether a configuration's flow list
// fits them (for `sluice --check` and for start-up, without EAL): with a
// `transport:` section, every capture-file host port without an rx capture
// is an emulated host whose address is its peer_ip. Each flow must go from
// one such host to another; errors name the flow list's file and line.

#include <cstdint>
#include <string>
#include <vector>

#include "lib/config/config.h"
#include "lib/config/config_loader.h"
#include "lib/config/config_validate.h"
#include "lib/emulator/hosts/flow_list.h"

namespace sluice {

struct TransportHostPort {
  size_t switch_index;
  size_t port_index;  // within its switch
  uint32_t ip;        // the host's address (the port's peer_ip)
};

// The transport host ports, in configuration order (none without a
// transport section).
std::vector<TransportHostPort> transport_host_ports(const Config& c);

// Reads the flow list into *flows and checks it against the host ports;
// false with errors ("flows.csv:12: flow 7: source 10.0.9.2 is not the
// address of a transport host ...").
bool check_transport_flows(const Config& c, std::vector<FlowListEntry>* flows,
                           std::vector<ConfigError>* errors);

}  // namespace sluice
