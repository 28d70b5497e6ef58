#include "lib/mechanisms/flowtune/flowtune_config.h"

#include <arpa/inet.h>

#include <bit>
#include <set>
#include <string>

#include "lib/config/config_check.h"
#include "lib/config/config_section.h"
#include "lib/config/yaml_reader.h"

namespace sluice {
namespace {

// An IPv4 address and UDP port, "A.B.C.D:PORT".
void parse_allocator(YamlReader& r, const Field& f, FlowtuneConfig* out) {
  const auto text = r.string(f);
  if (!text) return;
  in_addr a{};
  const size_t colon = text->rfind(':');
  if (!valid_host_port(*text) || inet_pton(AF_INET, text->substr(0, colon).c_str(), &a) != 1) {
    r.error(f.node, f.path,
            "expected an IPv4 address and UDP port such as 127.0.0.1:9750, got " +
                YamlReader::describe(f.node));
    return;
  }
  out->allocator_ip = ntohl(a.s_addr);
  out->allocator_port = static_cast<uint16_t>(std::stoul(text->substr(colon + 1)));
  out->allocator_given = true;
}

// Flowtune at an edge; the section's presence turns it on unless it says
// enabled: false. The idle gap must exceed the hosts' RTT (docs); the
// lease must match sluice-allocator's --lease.
void parse_flowtune(YamlReader& r, const Field& e, SwitchConfig* sw) {
  FlowtuneConfig* out = &sw->flowtune;
  if (!r.expect_map(e, {"enabled", "allocator", "idle_gap", "lease", "flows", "max_held_packets",
                        "ecn_threshold", "weight", "pace_at"})) {
    return;
  }
  out->enabled = true;
  if (auto f = r.field(e, "enabled", Need::kOptional)) set(r.boolean(*f), &out->enabled);
  if (auto f = r.field(e, "allocator", Need::kOptional)) parse_allocator(r, *f, out);
  if (auto f = r.field(e, "idle_gap", Need::kOptional))
    set(r.duration(*f, 1'000, 1'000'000'000), &out->idle_gap_ns);
  if (auto f = r.field(e, "lease", Need::kOptional))
    set(r.duration(*f, 100'000, 60'000'000'000ULL), &out->lease_ns);
  if (auto f = r.field(e, "flows", Need::kOptional)) {
    if (auto v = r.integer(*f, 4, 1u << 20)) {
      if (std::has_single_bit(*v)) {
        out->flows = static_cast<uint32_t>(*v);
      } else {
        r.error(f->node, f->path, "expected a power of two, got " + std::to_string(*v));
      }
    }
  }
  if (auto f = r.field(e, "max_held_packets", Need::kOptional))
    set(r.integer(*f, 1, 4096), &out->max_held_packets);
  if (auto f = r.field(e, "ecn_threshold", Need::kOptional))
    set(r.size(*f, 0, 1ULL << 30), &out->ecn_threshold_bytes);
  if (auto f = r.field(e, "weight", Need::kOptional)) set(r.integer(*f, 1, 65535), &out->weight);
  if (auto f = r.field(e, "pace_at", Need::kOptional)) {
    if (auto v = r.choice<bool>(*f, {{"edge", false}, {"host", true}})) out->pace_at_host = *v;
  }
}

// The allocator in the fabric; the section's presence turns it on. The
// iteration must be > 0: exact time would run a back-to-back allocator
// forever at one instant.
void parse_flowtune_allocator(YamlReader& r, const Field& a, Config* c) {
  FlowtuneAllocatorConfig* out = &c->flowtune_allocator;
  out->line = YamlReader::line_of(a.node);
  out->enabled = true;
  if (!r.expect_map(a,
                    {"control_delay", "iteration", "threshold", "host_rate", "hosts", "flows",
                     "paths"})) {
    return;
  }
  if (auto f = r.field(a, "control_delay", Need::kOptional))
    set(r.duration(*f, 0, 1'000'000'000), &out->control_delay_ns);
  if (auto f = r.field(a, "iteration", Need::kOptional))
    set(r.duration(*f, 100, 1'000'000'000), &out->iteration_ns);
  if (auto f = r.field(a, "threshold", Need::kOptional)) set(r.real(*f, 0, 0.5), &out->threshold);
  if (auto f = r.field(a, "host_rate", Need::kOptional)) set(r.rate(*f), &out->host_rate_bps);
  if (auto f = r.field(a, "hosts", Need::kOptional)) set(r.integer(*f, 1, 1u << 24), &out->hosts);
  if (auto f = r.field(a, "flows", Need::kOptional)) set(r.integer(*f, 1, 1u << 24), &out->flows);
  if (auto f = r.field(a, "paths", Need::kOptional))
    set(r.choice<bool>(*f, {{"hosts", false}, {"fabric", true}}), &out->full_paths);
}

// Flowtune paces what hosts send into an edge, so the switch needs host
// ports; Floodgate charges its windows at forward, before the pacer could
// hold or drop the packet.
void validate_flowtune(ConfigCheck& k, size_t s) {
  const Config& c = k.config();
  const SwitchConfig& sw = c.switches[s];
  if (!sw.flowtune.enabled) return;
  const std::string fpath = switch_key(s) + ".flowtune";
  if (sw.floodgate.enabled) {
    k.error(fpath,
            "flowtune and floodgate on one switch are not supported: floodgate debits a "
            "destination's window at forward, before the pacer holds or drops the packet");
  }
  bool host_port = false;
  for (const PortConfig& port : sw.ports) host_port |= port.role == PortRole::kHost;
  if (!host_port && !sw.ports.empty()) {
    k.error(fpath, "flowtune paces what hosts send into an edge switch, and switch \"" + sw.name +
                       "\" has no host-facing port (role: host)");
  }
  // Exact time runs the allocator inside the fabric, on its clock;
  // sluice-allocator over UDP keeps the machine's.
  if (c.clock.mode == ClockMode::kExact && !c.flowtune_allocator.enabled) {
    k.error(fpath,
            "flowtune in exact fabric time needs the allocator in the fabric: add a top-level "
            "flowtune_allocator section (sluice-allocator over UDP keeps the machine's clock, "
            "so it runs with clock.mode real only)");
  }
  if (c.flowtune_allocator.enabled && sw.flowtune.allocator_given) {
    k.error(fpath + ".allocator",
            "names a sluice-allocator over UDP, but flowtune_allocator runs the allocator in the "
            "fabric: remove one of them");
  }
  // Endpoint pacing: the paper's servers are TCP senders that pace at
  // their allocation; sluice's TCP and DCTCP hosts do.
  const TransportKind kind = c.transport.kind;
  if (sw.flowtune.pace_at_host && kind != TransportKind::kTcp && kind != TransportKind::kDctcp) {
    k.error(fpath + ".pace_at",
            "pace_at: host needs hosts that pace themselves: transport kind tcp or dctcp "
            "(the edge paces otherwise: pace_at: edge)");
  }
}

// The allocator in the fabric runs on exact fabric time. Its hosts' link
// capacity is the edges' host ports' rate unless it is given.
void validate_flowtune_allocator(ConfigCheck& k) {
  const Config& c = k.config();
  const FlowtuneAllocatorConfig& a = c.flowtune_allocator;
  if (!a.enabled) return;
  if (c.clock.mode != ClockMode::kExact) {
    k.error("flowtune_allocator",
            "the allocator in the fabric runs on exact fabric time (clock.mode exact); in real "
            "time run sluice-allocator and give its address in switches[].flowtune.allocator");
  }
  if (a.host_rate_bps != 0) return;
  std::set<uint64_t> rates;
  for (const SwitchConfig& sw : c.switches) {
    if (!sw.flowtune.enabled) continue;
    for (const PortConfig& port : sw.ports) {
      if (port.role == PortRole::kHost && port.rate_bps != 0) rates.insert(port.rate_bps);
    }
  }
  if (rates.size() > 1) {
    std::string list;
    for (uint64_t r : rates) list += (list.empty() ? "" : ", ") + std::to_string(r) + " bit/s";
    k.error("flowtune_allocator",
            "the flowtune edges' host ports have different rates (" + list +
                "): give host_rate, the capacity the allocator gives every host link");
  }
}

// The edge's forward step (flowlets, the pacer that holds a flow's packets)
// keeps its state on the lcore that receives the host port.
std::string edge_receiver(const SwitchConfig& sw, const PortConfig& port) {
  if (!sw.flowtune.enabled || port.role != PortRole::kHost) return "";
  return "flowtune: a host port of switch \"" + sw.name +
         "\" is a flowtune edge, whose flowlets and pacer live on the lcore that receives it";
}

}  // namespace

const ConfigSections kFlowtuneSections{
    .top = {.key = "flowtune_allocator",
            .parse = parse_flowtune_allocator,
            .validate = validate_flowtune_allocator},
    .in_switch = {.key = "flowtune",
                  .parse = parse_flowtune,
                  .validate = validate_flowtune,
                  .receive_on_owner = edge_receiver},
};

}  // namespace sluice
