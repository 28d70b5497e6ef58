#include "lib/config/config_validate.h"

#include <map>
#include <optional>
#include <set>
#include <utility>

#include "lib/config/config_check.h"
#include "lib/config/config_section.h"
#include "lib/net/mac_addr.h"

namespace sluice {
namespace {

bool valid_name(const std::string& s) {
  if (s.empty()) return false;
  for (char c : s) {
    const bool ok = (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '_' || c == '-';
    if (!ok) return false;
  }
  return true;
}

class Validator {
 public:
  Validator(const Config& c, const KeyLines& lines, std::vector<ConfigError>* errors,
            std::vector<ConfigError>* notes)
      : c_(c), k_(c, lines, errors, notes) {}

  void run() {
    index_names();
    for (size_t s = 0; s < c_.switches.size(); ++s) {
      for (size_t p = 0; p < c_.switches[s].ports.size(); ++p) {
        check_link(s, p);
        check_capture_port(s, p);
        for (const ConfigSections* sections : all_config_sections()) {
          if (sections->in_port.validate) sections->in_port.validate(k_, s, p);
        }
      }
      check_routes(s);
      check_queueing(s);
      check_reply_queue(s);
      for (const ConfigSections* sections : all_config_sections()) {
        if (sections->in_switch.validate) sections->in_switch.validate(k_, s);
      }
    }
    check_workers();
    check_capture_files();
    check_clock();
    for (const ConfigSections* sections : all_config_sections()) {
      if (sections->top.validate) sections->top.validate(k_);
    }
  }

 private:
  // Queueing by flow (docs/traffic-manager.md, "Queueing by flow") replaces
  // the class queues, so what works on classes cannot share its switch.
  void check_queueing(size_t s) {
    const SwitchConfig& sw = c_.switches[s];
    uint32_t default_mtu = 0;  // the largest mtu among the ports that take the default
    for (size_t p = 0; p < sw.ports.size(); ++p) {
      if (sw.ports[p].queueing)
        check_queueing_of(sw, *sw.ports[p].queueing, sw.ports[p].mtu, port_key(s, p) + ".queueing");
      else
        default_mtu = std::max(default_mtu, sw.ports[p].mtu);
    }
    if (default_mtu != 0)
      check_queueing_of(sw, sw.tm.queueing, default_mtu, switch_key(s) + ".queueing");
  }

  // The reply queue follows the data queues, and only class queues have one.
  void check_reply_queue(size_t s) {
    const SwitchConfig& sw = c_.switches[s];
    if (!sw.tm.reply_queue) return;
    const std::string key = switch_key(s) + ".reply_queue";
    if (sw.tm.queues_per_port > 63) {
      k_.error(key,
               "reply_queue adds a queue after the data queues: expected queues_per_port of "
               "63 or fewer, got " +
                   std::to_string(sw.tm.queues_per_port));
    }
    bool by_flow = sw.tm.queueing.kind != QueueingKind::kClass;
    for (const PortConfig& p : sw.ports)
      by_flow = by_flow || (p.queueing && p.queueing->kind != QueueingKind::kClass);
    if (by_flow)
      k_.error(key, "reply_queue needs class queues: a port here queues by flow (queueing)");
  }

  void check_queueing_of(const SwitchConfig& sw, const FlowQueueingConfig& q, uint32_t mtu,
                         const std::string& key) {
    if (q.kind == QueueingKind::kClass) return;
    if (q.kind == QueueingKind::kPfabric && q.pfabric_buffer_bytes < mtu + 18) {
      k_.error(key, "expected a pfabric buffer of at least the largest frame (mtu " +
                        std::to_string(mtu) + " + 18 = " + std::to_string(mtu + 18) +
                        " bytes), got " + std::to_string(q.pfabric_buffer_bytes));
    }
    const char* with = sw.bfc.enabled         ? "bfc (it assigns flows to class queues)"
                       : sw.floodgate.enabled ? "floodgate (its VOQs release into class queues)"
                       : sw.tcd.enabled       ? "tcd (it detects congestion per class queue)"
                       : sw.dibs.enabled      ? "dibs (it admits detours per class queue)"
                                              : nullptr;
    if (with != nullptr) {
      k_.error(key, std::string("queueing by flow cannot share a switch with ") + with +
                        ": give mode class, or turn the mechanism off");
    }
    if (sw.tm.class_mapping == ClassMapping::kDscp) {
      k_.error(key,
               "queueing by flow replaces the class map: give class_map fifo (a PFC pause of "
               "any priority then holds every flow of the port)");
    }
    if (q.kind != QueueingKind::kPfabric && q.quantum_bytes < mtu + 18) {
      k_.error(key, "expected a quantum of at least the largest frame (mtu " + std::to_string(mtu) +
                        " + 18 = " + std::to_string(mtu + 18) + " bytes), got " +
                        std::to_string(q.quantum_bytes));
    }
  }

  // Names are unique and well formed; fills the switch/port lookup tables.
  void index_names() {
    for (size_t s = 0; s < c_.switches.size(); ++s) {
      const SwitchConfig& sw = c_.switches[s];
      const std::string spath = switch_key(s);
      check_name(spath + ".name", sw.name);
      if (!sw.name.empty() && !k_.add_switch(sw.name, s)) {
        k_.error(spath + ".name", "duplicate switch name \"" + sw.name + "\"");
      }
      for (size_t p = 0; p < sw.ports.size(); ++p) {
        const std::string& name = sw.ports[p].name;
        const std::string ppath = item_key(spath, "ports", p);
        check_name(ppath + ".name", name);
        if (!name.empty() && !k_.add_port(s, name, p)) {
          k_.error(ppath + ".name",
                   "duplicate port name \"" + name + "\" in switch \"" + sw.name + "\"");
        }
      }
    }
  }

  void check_name(const std::string& key, const std::string& name) {
    if (!name.empty() && !valid_name(name)) {
      k_.error(key,
               "expected a name of lower-case letters, digits, '_' and '-', got \"" + name + "\"");
    }
  }

  void check_link(size_t s, size_t p) {
    const SwitchConfig& sw = c_.switches[s];
    const PortConfig& port = sw.ports[p];
    if (port.link_peer.empty()) return;
    const std::string key = port_key(s, p) + ".link";
    const size_t slash = port.link_peer.find('/');
    const std::string peer_sw = port.link_peer.substr(0, slash);
    const std::string peer_port = port.link_peer.substr(slash + 1);
    const auto peer = k_.find_port(peer_sw, peer_port);
    if (!peer) {
      const bool sw_known = k_.knows_switch(peer_sw);
      k_.error(key, "link peer \"" + port.link_peer + "\" does not exist (no " +
                        (sw_known ? "port \"" + peer_port + "\" in switch \"" + peer_sw + "\")"
                                  : "switch \"" + peer_sw + "\")"));
      return;
    }
    if (*peer == std::make_pair(s, p)) {
      k_.error(key, "a port cannot link to itself");
      return;
    }
    const PortConfig& other = c_.switches[peer->first].ports[peer->second];
    const std::string self = sw.name + "/" + port.name;
    if (other.link_peer != self) {
      k_.error(key, "link peer \"" + port.link_peer +
                        "\" does not link back: it should say link: " + self +
                        (other.link_peer.empty() ? "" : ", but says " + other.link_peer));
      return;
    }
    if (port.role != PortRole::kSwitch) {
      k_.error(port_key(s, p) + ".role",
               "an internal link joins two switches: expected role switch at " + self);
    }
    // Report a mismatch once per link, from its first end.
    if (std::make_pair(s, p) > *peer) return;
    if (port.rate_bps != other.rate_bps) {
      k_.error(key, "rate mismatch across the link: " + self + " has " +
                        std::to_string(port.rate_bps) + "bps, " + port.link_peer + " has " +
                        std::to_string(other.rate_bps) + "bps");
    }
    for (const ConfigSections* sections : all_config_sections()) {
      if (sections->in_switch.validate_link)
        sections->in_switch.validate_link(k_, key, sw, c_.switches[peer->first]);
    }
  }

  // A capture-file port that neither replays nor writes is a transport
  // host, or nothing.
  void check_capture_port(size_t s, size_t p) {
    const PortConfig& port = c_.switches[s].ports[p];
    const std::string pcap_key = port_key(s, p) + ".pcap";
    if (port.pcap && port.pcap->rx_path.empty() && port.pcap->tx_path.empty() &&
        !is_transport_host_port(c_, port) && !k_.has_error_at_or_in(pcap_key)) {
      k_.error(pcap_key,
               "expected rx (a capture to replay), tx (a capture to write) or both (or, with a "
               "transport section, a host port that runs it)");
    }
  }

  void check_routes(size_t s) {
    const SwitchConfig& sw = c_.switches[s];
    const std::string spath = switch_key(s);
    std::map<std::pair<uint32_t, uint8_t>, size_t> seen;
    for (size_t r = 0; r < sw.routes.size(); ++r) {
      const RouteConfig& route = sw.routes[r];
      const std::string rpath = item_key(spath, "routes", r);
      const auto prefix_key = std::make_pair(route.prefix.addr, route.prefix.len);
      const bool prefix_ok = k_.written(rpath + ".prefix") && !k_.has_error(rpath + ".prefix");
      if (prefix_ok && !seen.emplace(prefix_key, r).second) {
        k_.error(rpath + ".prefix", "duplicate route prefix " + format_ipv4(route.prefix.addr) +
                                        "/" + std::to_string(route.prefix.len) + " (also " +
                                        item_key(spath, "routes", seen[prefix_key]) + ")");
      }
      std::set<std::string> named;
      for (size_t i = 0; i < route.ports.size(); ++i) {
        const std::string& name = route.ports[i];
        const std::string key =
            k_.written(rpath + ".port") ? rpath + ".port" : item_key(rpath, "ports", i);
        if (!k_.find_port(sw.name, name)) {
          k_.error(key, "unknown port \"" + name + "\" in switch \"" + sw.name + "\"");
        } else if (!named.insert(name).second) {
          k_.error(key, "port \"" + name + "\" is listed twice");
        }
      }
    }
  }

  void check_workers() {
    if (c_.workers.empty()) return;
    std::map<unsigned, size_t> lcores;
    std::map<std::pair<size_t, size_t>, size_t> owner;  // port -> worker index
    for (size_t w = 0; w < c_.workers.size(); ++w) {
      const WorkerConfig& worker = c_.workers[w];
      const std::string wpath = item_key("", "workers", w);
      if (k_.written(wpath + ".lcore") && !k_.has_error(wpath + ".lcore")) check_lcore(w, lcores);
      for (size_t i = 0; i < worker.ports.size(); ++i) {
        const PortRef& ref = worker.ports[i];
        if (ref.sw.empty()) continue;  // malformed, already reported
        const std::string key = item_key(wpath, "ports", i);
        const std::string name = ref.sw + "/" + ref.port;
        const auto port = k_.find_port(ref.sw, ref.port);
        if (!port) {
          k_.error(key, "unknown port \"" + name + "\"");
          continue;
        }
        const auto [it, fresh] = owner.emplace(*port, w);
        if (!fresh) {
          k_.error(key,
                   "overlapping lcores: port " + name + " is already assigned to " +
                       (it->second == w ? "this worker" : item_key("", "workers", it->second)) +
                       " (lcore " + std::to_string(c_.workers[it->second].lcore) + ")");
        }
      }
    }
    check_every_port_owned(owner);
    check_one_lcore(owner);
    for (size_t w = 0; w < c_.workers.size(); ++w) check_receive(w, owner);
  }

  // A worker's `receive`: device ports another worker owns, each once; a
  // port is then received on an rx queue per worker (docs/configuration.md,
  // "workers[]").
  void check_receive(size_t w, const std::map<std::pair<size_t, size_t>, size_t>& owner) {
    const WorkerConfig& worker = c_.workers[w];
    std::set<std::pair<size_t, size_t>> listed;
    for (size_t i = 0; i < worker.receive.size(); ++i) {
      const PortRef& ref = worker.receive[i];
      if (ref.sw.empty()) continue;  // malformed, already reported
      const std::string key = item_key(item_key("", "workers", w), "receive", i);
      const std::string name = ref.sw + "/" + ref.port;
      const auto port = k_.find_port(ref.sw, ref.port);
      if (!port) {
        k_.error(key, "unknown port \"" + name + "\"");
        continue;
      }
      const SwitchConfig& sw = c_.switches[port->first];
      const PortConfig& pc = sw.ports[port->second];
      if (pc.device.empty()) {
        k_.error(key, "port " + name + " is not a device port: only a device's frames can be " +
                          "spread over rx queues (an internal link or a capture-file port is " +
                          "received by its owner)");
        continue;
      }
      const auto it = owner.find(*port);
      if (it != owner.end() && it->second == w) {
        k_.error(key, "port " + name + " is this worker's own (its owner receives rx queue 0); " +
                          "receive lists other workers' ports");
        continue;
      }
      if (!listed.insert(*port).second) {
        k_.error(key, "port " + name + " is listed twice (one rx queue per worker)");
        continue;
      }
      for (const ConfigSections* sections : all_config_sections()) {
        const auto why = sections->in_switch.receive_on_owner;
        if (why == nullptr) continue;
        if (std::string reason = why(sw, pc); !reason.empty()) {
          k_.error(key, "port " + name + " cannot be received on several lcores: " + reason);
          break;
        }
      }
    }
  }

  // Ports that a section says one lcore must own together (state with one
  // writer; SwitchSection::one_lcore): the first of them that a worker
  // splits off is reported, in the section's words.
  void check_one_lcore(const std::map<std::pair<size_t, size_t>, size_t>& owner) {
    for (const ConfigSections* sections : all_config_sections()) {
      const SwitchSection& section = sections->in_switch;
      if (!section.one_lcore) continue;
      for (size_t s = 0; s < c_.switches.size(); ++s) {
        const SwitchConfig& sw = c_.switches[s];
        std::optional<size_t> first;
        for (size_t p = 0; p < sw.ports.size(); ++p) {
          const auto it = owner.find({s, p});
          if (!section.one_lcore(sw, sw.ports[p]) || it == owner.end()) continue;
          if (!first) first = it->second;
          if (it->second == *first) continue;
          k_.error(item_key("", "workers", it->second),
                   section.one_lcore_error(sw, sw.ports[p], item_key("", "workers", *first)));
          break;
        }
      }
    }
  }

  void check_lcore(size_t w, std::map<unsigned, size_t>& lcores) {
    const unsigned lcore = c_.workers[w].lcore;
    const std::string key = item_key("", "workers", w) + ".lcore";
    if (lcore == 0) {
      k_.error(key,
               "lcore 0 is the main lcore (it runs the control loop); workers need other lcores");
      return;
    }
    const auto [it, fresh] = lcores.emplace(lcore, w);
    if (!fresh) {
      k_.error(key, "lcore " + std::to_string(lcore) + " is listed twice (also " +
                        item_key("", "workers", it->second) + ")");
    }
  }

  void check_every_port_owned(const std::map<std::pair<size_t, size_t>, size_t>& owner) {
    for (size_t s = 0; s < c_.switches.size(); ++s) {
      const SwitchConfig& sw = c_.switches[s];
      for (size_t p = 0; p < sw.ports.size(); ++p) {
        if (sw.ports[p].name.empty() || owner.count({s, p})) continue;
        k_.error(port_key(s, p) + ".name",
                 "port " + sw.name + "/" + sw.ports[p].name +
                     " is assigned to no worker (when workers are given, every port needs one)");
      }
    }
  }

  // A file may be written by one port only, and a file that is written may not
  // also be replayed: opening it for writing would truncate it. Paths are
  // compared as written, so "a.pcap" and "./a.pcap" are not recognised as one.
  void check_capture_files() {
    std::map<std::string, std::string> writer;  // tx path -> key of its first writer
    for (const auto& [path, key] : capture_files(&PcapPortConfig::tx_path, ".pcap.tx")) {
      const auto [it, fresh] = writer.emplace(path, key);
      if (!fresh) k_.error(key, "\"" + path + "\" is already written by " + it->second);
    }
    for (const auto& [path, key] : capture_files(&PcapPortConfig::rx_path, ".pcap.rx")) {
      const auto it = writer.find(path);
      if (it != writer.end()) {
        k_.error(key, "\"" + path + "\" is also written by " + it->second +
                          ", which would truncate it before it is replayed");
      }
    }
  }

  // Exact fabric time never reads the machine's clock, which only the
  // fabric's own ports can follow: a device or host outside the process
  // keeps the machine's time. A port without a rate would take any number
  // of frames in one instant. A host link's delay is modelled only there.
  void check_clock() {
    for (size_t s = 0; s < c_.switches.size(); ++s) {
      const SwitchConfig& sw = c_.switches[s];
      for (size_t p = 0; p < sw.ports.size(); ++p) {
        const PortConfig& port = sw.ports[p];
        const std::string name = sw.name + "/" + port.name;
        const std::string path = port_key(s, p);
        if (c_.clock.mode != ClockMode::kExact) {
          if (port.pcap && port.link_delay_ns != 0)
            k_.error(path + ".delay",
                     "a capture-file host's link delay is modelled in exact fabric time only "
                     "(clock.mode exact)");
          continue;
        }
        if (!port.pcap && port.link_peer.empty()) {
          k_.error("clock.mode",
                   "exact fabric time needs every port to be a capture-file port or an internal "
                   "link, but " +
                       name + " is device \"" + port.device + "\", which keeps the machine's time");
          return;
        }
        if (port.rate_bps == 0) {
          k_.error(path + ".rate",
                   "exact fabric time needs a rate on every port (" + name +
                       " has none, so it would take any number of frames in one instant)");
        }
      }
    }
  }

  // (path, key) of every non-empty rx_path or tx_path, in file order.
  std::vector<std::pair<std::string, std::string>> capture_files(
      std::string PcapPortConfig::*member, const char* suffix) const {
    std::vector<std::pair<std::string, std::string>> out;
    for (size_t s = 0; s < c_.switches.size(); ++s) {
      for (size_t p = 0; p < c_.switches[s].ports.size(); ++p) {
        const auto& pcap = c_.switches[s].ports[p].pcap;
        if (!pcap || ((*pcap).*member).empty()) continue;
        out.emplace_back((*pcap).*member, port_key(s, p) + suffix);
      }
    }
    return out;
  }

  const Config& c_;
  ConfigCheck k_;
};

}  // namespace

bool is_transport_host_port(const Config& c, const PortConfig& p) {
  return c.transport.kind != TransportKind::kNone && p.role == PortRole::kHost && p.pcap &&
         p.pcap->rx_path.empty() && p.link_peer.empty();
}

int line_for(const KeyLines& lines, std::string path) {
  while (!path.empty()) {
    const auto it = lines.find(path);
    if (it != lines.end()) return it->second;
    const size_t cut = path.find_last_of(".[");
    if (cut == std::string::npos) break;
    path.resize(cut);
  }
  return 0;
}

void validate_config(const Config& config, const KeyLines& lines, std::vector<ConfigError>* errors,
                     std::vector<ConfigError>* notes) {
  Validator(config, lines, errors, notes).run();
}

}  // namespace sluice
