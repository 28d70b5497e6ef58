#include "lib/config/config_loader.h"

#include <yaml-cpp/yaml.h>

#include <algorithm>
#include <cctype>
#include <fstream>
#include <sstream>

#include "lib/config/config_section.h"
#include "lib/config/config_validate.h"
#include "lib/config/yaml_reader.h"
#include "lib/net/mac_addr.h"

namespace sluice {
namespace {

// "10.0.0.1/24" with host bits allowed (a port address); nullopt if malformed.
std::optional<Ipv4Prefix> parse_address_with_length(std::string_view text) {
  const size_t slash = text.find('/');
  if (slash == std::string_view::npos) return std::nullopt;
  const std::string_view len_text = text.substr(slash + 1);
  if (len_text.empty() || len_text.size() > 2) return std::nullopt;
  unsigned len = 0;
  for (char c : len_text) {
    if (!std::isdigit(static_cast<unsigned char>(c))) return std::nullopt;
    len = len * 10 + unsigned(c - '0');
  }
  Ipv4Prefix p;
  if (len > 32 || !parse_ipv4(text.substr(0, slash), &p.addr)) return std::nullopt;
  p.len = uint8_t(len);
  return p;
}

std::optional<PortRef> parse_port_ref(std::string_view text) {
  const size_t slash = text.find('/');
  if (slash == std::string_view::npos || slash == 0 || slash + 1 == text.size() ||
      text.find('/', slash + 1) != std::string_view::npos) {
    return std::nullopt;
  }
  return PortRef{std::string(text.substr(0, slash)), std::string(text.substr(slash + 1))};
}

// Reads the core's sections (clock, seed, metrics, mbufs, switches with
// their buffer, traffic manager, ecn, ports and routes, workers) and hands
// every other key to its section's parser (lib/config/config_section.h), in
// the order all_config_sections() gives.
class Loader {
 public:
  Loader(const std::string& file, std::vector<ConfigError>* errors, KeyLines* lines)
      : r_(file, errors, lines) {}

  void load(const YAML::Node& root, Config* c) {
    const Field top{root, ""};
    if (!r_.expect_map(top, keys({"clock", "seed", "ecmp_hash", "metrics", "mbufs", "mbuf_size",
                                  "switches", "workers"},
                                 &ConfigSections::top, {})))
      return;
    if (auto f = r_.field(top, "clock", Need::kOptional)) load_clock(*f, &c->clock);
    if (auto f = r_.field(top, "seed", Need::kOptional))
      set(r_.integer(*f, 0, UINT32_MAX), &c->seed);
    if (auto f = r_.field(top, "ecmp_hash", Need::kOptional)) {
      set(r_.choice<EcmpHashing>(*f, {{"per-switch", EcmpHashing::kPerSwitch},
                                      {"symmetric", EcmpHashing::kSymmetric}}),
          &c->ecmp_hash);
    }
    if (auto f = r_.field(top, "metrics", Need::kOptional)) load_metrics(*f, &c->metrics);
    if (auto f = r_.field(top, "mbufs", Need::kOptional))
      set(r_.integer(*f, 1024, 1u << 26), &c->mbufs);
    if (auto f = r_.field(top, "mbuf_size", Need::kOptional))
      set(r_.size(*f, kDefaultMbufSize, kMaxMbufSize), &c->mbuf_size);
    if (auto f = r_.field(top, "switches", Need::kRequired)) {
      if (auto items = r_.list(*f)) {
        if (items->empty()) r_.error(f->node, f->path, "expected at least one switch");
        for (const Field& item : *items) load_switch(item, &c->switches.emplace_back());
      }
    }
    if (auto f = r_.field(top, "workers", Need::kOptional)) {
      if (auto items = r_.list(*f)) {
        for (const Field& item : *items) load_worker(item, &c->workers.emplace_back());
      }
    }
    for (const ConfigSections* sections : all_config_sections()) {
      const TopSection& section = sections->top;
      if (section.key.empty()) continue;
      if (auto f = r_.field(top, section.key, Need::kOptional)) section.parse(r_, *f, c);
    }
  }

 private:
  // A map's allowed keys: the core's `before`, every section's key at this
  // level (in list order), then the core's `after`.
  template <typename Section>
  static std::vector<std::string_view> keys(std::initializer_list<std::string_view> before,
                                            Section ConfigSections::*level,
                                            std::initializer_list<std::string_view> after) {
    std::vector<std::string_view> out(before);
    for (const ConfigSections* sections : all_config_sections()) {
      const Section& section = sections->*level;
      if (!section.key.empty()) out.push_back(section.key);
    }
    out.insert(out.end(), after);
    return out;
  }

  void load_clock(const Field& k, ClockConfig* out) {
    out->line = YamlReader::line_of(k.node);
    // max_step is accepted here only to be refused below with its reason.
    if (!r_.expect_map(k, {"mode", "max_step"})) return;
    if (auto f = r_.field(k, "mode", Need::kOptional)) {
      if (f->node.IsScalar() && f->node.Scalar() == "virtual") {
        r_.error(f->node, f->path,
                 "virtual time was replaced by exact fabric time: give \"exact\" "
                 "(docs/emulator.md, \"Fabric time\")");
      } else {
        set(r_.choice<ClockMode>(*f, {{"real", ClockMode::kReal}, {"exact", ClockMode::kExact}}),
            &out->mode);
      }
    }
    // Virtual time's step; exact time has none.
    if (auto f = r_.field(k, "max_step", Need::kOptional))
      r_.error(f->node, f->path, "no longer used: exact fabric time has no step (remove it)");
  }

  void load_metrics(const Field& m, MetricsConfig* out) {
    if (!r_.expect_map(m, {"enabled", "address"})) return;
    if (auto f = r_.field(m, "enabled", Need::kOptional)) set(r_.boolean(*f), &out->enabled);
    if (auto f = r_.field(m, "address", Need::kOptional)) {
      if (auto text = r_.string(*f)) {
        if (valid_host_port(*text)) {
          out->address = *text;
        } else {
          r_.error(
              f->node, f->path,
              "expected host:port such as 127.0.0.1:9100, got " + YamlReader::describe(f->node));
        }
      }
    }
  }

  void load_switch(const Field& s, SwitchConfig* out) {
    out->line = YamlReader::line_of(s.node);
    if (!r_.expect_map(s, keys({"name", "buffer", "queues_per_port", "queue_capacity", "scheduler",
                                "class_map", "drr_quantum", "ecn", "queueing", "reply_queue"},
                               &ConfigSections::in_switch, {"ports", "routes"}))) {
      return;
    }
    if (auto f = r_.field(s, "name", Need::kRequired)) set(r_.string(*f), &out->name);
    if (auto f = r_.field(s, "buffer", Need::kOptional)) load_buffer(*f, &out->buffer);
    load_tm(s, &out->tm);
    for (const ConfigSections* sections : all_config_sections()) {
      const SwitchSection& section = sections->in_switch;
      if (section.key.empty()) continue;
      if (auto f = r_.field(s, section.key, Need::kOptional)) section.parse(r_, *f, out);
    }
    if (auto f = r_.field(s, "ports", Need::kRequired)) {
      if (auto items = r_.list(*f)) {
        if (items->empty()) r_.error(f->node, f->path, "expected at least one port");
        for (const Field& item : *items) load_port(item, &out->ports.emplace_back());
      }
    }
    if (auto f = r_.field(s, "routes", Need::kOptional)) {
      if (auto items = r_.list(*f)) {
        for (const Field& item : *items) load_route(item, &out->routes.emplace_back());
      }
    }
  }

  void load_buffer(const Field& b, BufferConfig* out) {
    if (!r_.expect_map(b, {"size", "alpha"})) return;
    if (auto f = r_.field(b, "size", Need::kOptional))
      set(r_.size(*f, 1, UINT64_MAX), &out->size_bytes);
    if (auto f = r_.field(b, "alpha", Need::kOptional))
      set(r_.real(*f, 0.0, INFINITY), &out->dt_alpha);
  }

  // The traffic-manager keys sit directly in the switch map.
  void load_tm(const Field& s, TrafficManagerConfig* out) {
    if (auto f = r_.field(s, "queues_per_port", Need::kOptional))
      set(r_.integer(*f, 1, 64), &out->queues_per_port);
    if (auto f = r_.field(s, "queue_capacity", Need::kOptional)) {
      set(r_.integer(*f, 16, 1u << 20), &out->queue_capacity_packets);
    }
    if (auto f = r_.field(s, "scheduler", Need::kOptional)) {
      set(r_.choice<SchedulerKind>(
              *f, {{"drr", SchedulerKind::kDrr}, {"strict", SchedulerKind::kStrictPriority}}),
          &out->scheduler);
    }
    if (auto f = r_.field(s, "class_map", Need::kOptional)) {
      set(r_.choice<ClassMapping>(
              *f, {{"fifo", ClassMapping::kSingleFifo}, {"dscp", ClassMapping::kDscp}}),
          &out->class_mapping);
    }
    if (auto f = r_.field(s, "drr_quantum", Need::kOptional)) {
      set(r_.size(*f, 64, UINT32_MAX), &out->drr_quantum_bytes);
    }
    if (auto f = r_.field(s, "ecn", Need::kOptional)) load_ecn(*f, &out->ecn);
    if (auto f = r_.field(s, "queueing", Need::kOptional)) load_queueing(*f, &out->queueing);
    if (auto f = r_.field(s, "reply_queue", Need::kOptional))
      set(r_.boolean(*f), &out->reply_queue);
  }

  // How a port's data queues are kept (a switch's default, or a port's own).
  void load_queueing(const Field& q, FlowQueueingConfig* out) {
    if (!r_.expect_map(q, {"mode", "queues", "quantum", "buffer", "codel"})) return;
    if (auto f = r_.field(q, "mode", Need::kRequired)) {
      set(r_.choice<QueueingKind>(*f, {{"class", QueueingKind::kClass},
                                       {"sfq", QueueingKind::kSfq},
                                       {"fq", QueueingKind::kFairQueue},
                                       {"pfabric", QueueingKind::kPfabric}}),
          &out->kind);
    }
    const bool by_flow = out->kind == QueueingKind::kSfq || out->kind == QueueingKind::kFairQueue;
    auto only_by_flow = [&](const Field& f) {
      if (by_flow) return true;
      r_.error(f.node, f.path, "applies only to mode sfq or fq");
      return false;
    };
    if (auto f = r_.field(q, "queues", Need::kOptional)) {
      if (out->kind == QueueingKind::kSfq)
        set(r_.integer(*f, 1, kMaxSfqQueues), &out->sfq_queues);
      else
        r_.error(f->node, f->path, "\"queues\" applies only to mode sfq (fq has a queue per flow)");
    }
    if (auto f = r_.field(q, "quantum", Need::kOptional); f && only_by_flow(*f))
      set(r_.size(*f, 64, UINT32_MAX), &out->quantum_bytes);
    if (auto f = r_.field(q, "buffer", Need::kOptional)) {
      if (out->kind == QueueingKind::kPfabric) {
        // pFabric's own small buffer, a size.
        set(r_.size(*f, 60, kMaxPfabricBufferBytes), &out->pfabric_buffer_bytes);
      } else if (only_by_flow(*f)) {
        if (auto unlimited = r_.choice<bool>(*f, {{"shared", false}, {"unlimited", true}}))
          out->unlimited_buffer = *unlimited;
      }
    }
    if (auto f = r_.field(q, "codel", Need::kOptional); f && only_by_flow(*f)) {
      out->codel = true;
      if (!r_.expect_map(*f, {"target", "interval", "ecn"})) return;
      if (auto t = r_.field(*f, "target", Need::kOptional))
        set(r_.duration(*t, 1, kMaxCodelNs), &out->codel_target_ns);
      if (auto t = r_.field(*f, "interval", Need::kOptional))
        set(r_.duration(*t, 1, kMaxCodelNs), &out->codel_interval_ns);
      if (auto t = r_.field(*f, "ecn", Need::kOptional)) set(r_.boolean(*t), &out->codel_ecn);
      if (out->codel_target_ns >= out->codel_interval_ns) {
        r_.error(f->node, f->path,
                 "expected target below interval (RFC 8289 section 4.4: 5-10 % of it), got " +
                     std::to_string(out->codel_target_ns) + " ns and " +
                     std::to_string(out->codel_interval_ns) + " ns");
      }
    }
  }

  void load_ecn(const Field& e, EcnConfig* out) {
    if (!r_.expect_map(e, {"mode", "k", "min", "max", "pmax"})) return;
    if (auto f = r_.field(e, "mode", Need::kRequired)) {
      set(r_.choice<EcnMode>(
              *f, {{"off", EcnMode::kOff}, {"step", EcnMode::kStep}, {"red", EcnMode::kRed}}),
          &out->mode);
    }
    const bool step = out->mode == EcnMode::kStep, red = out->mode == EcnMode::kRed;
    const bool off = out->mode == EcnMode::kOff;
    const Need need_step = step ? Need::kRequired : Need::kOptional;
    const Need need_red = red ? Need::kRequired : Need::kOptional;
    if (auto f = r_.field(e, "k", need_step)) {
      if (step || off)
        set(r_.size(*f, 1, UINT64_MAX), &out->step_k_bytes);
      else
        r_.error(f->node, f->path, "\"k\" applies only to mode step");
    }
    std::optional<Field> min_f = r_.field(e, "min", need_red);
    std::optional<Field> max_f = r_.field(e, "max", need_red);
    std::optional<Field> pmax_f = r_.field(e, "pmax", need_red);
    for (const auto* f : {&min_f, &max_f, &pmax_f}) {
      if (*f && step) r_.error((*f)->node, (*f)->path, "this key applies only to mode red");
    }
    if (step) return;
    std::optional<uint64_t> min, max;
    if (min_f) set(min = r_.size(*min_f, 0, UINT64_MAX), &out->red_min_bytes);
    if (max_f) set(max = r_.size(*max_f, 1, UINT64_MAX), &out->red_max_bytes);
    if (pmax_f) set(r_.real(*pmax_f, 0.0, 1.0), &out->red_pmax);
    if (min && max && *max <= *min) {
      r_.error(max_f->node, max_f->path,
               "expected max greater than min (" + std::to_string(*min) + "B), got " +
                   YamlReader::describe(max_f->node));
    }
  }

  void load_port(const Field& p, PortConfig* out) {
    out->line = YamlReader::line_of(p.node);
    if (!r_.expect_map(
            p, keys({"name",          "device",       "link",     "pcap",     "delay",
                     "loss",          "fifo",         "role",     "rate",     "mtu",
                     "wire_overhead", "shaper_burst", "mac",      "peer_mac", "peer_ip",
                     "ipv4",          "hop_rtt",      "queueing", "ecn",      "cut_through"},
                    &ConfigSections::in_port, {}))) {
      return;
    }
    if (auto f = r_.field(p, "name", Need::kRequired)) set(r_.string(*f), &out->name);
    load_attachment(p, out);
    if (auto f = r_.field(p, "role", Need::kRequired)) {
      set(r_.choice<PortRole>(*f, {{"host", PortRole::kHost}, {"switch", PortRole::kSwitch}}),
          &out->role);
    }
    if (auto f = r_.field(p, "rate", Need::kRequired)) set(r_.rate(*f), &out->rate_bps);
    if (auto f = r_.field(p, "mtu", Need::kOptional)) set(r_.integer(*f, 68, 9216), &out->mtu);
    if (auto f = r_.field(p, "wire_overhead", Need::kOptional)) {
      set(r_.size(*f, 0, 256), &out->wire_overhead_bytes);
    }
    if (auto f = r_.field(p, "mac", Need::kOptional)) out->mac = mac(*f);
    if (auto f = r_.field(p, "peer_mac", Need::kOptional)) out->peer_mac = mac(*f);
    if (auto f = r_.field(p, "peer_ip", Need::kOptional)) out->peer_ipv4 = ipv4(*f);
    if (auto f = r_.field(p, "ipv4", Need::kOptional)) out->ipv4 = port_address(*f);
    if (auto f = r_.field(p, "hop_rtt", Need::kOptional)) {
      set(r_.duration(*f, 1, UINT64_MAX), &out->hop_rtt_ns);
    }
    if (auto f = r_.field(p, "queueing", Need::kOptional))
      load_queueing(*f, &out->queueing.emplace());
    if (auto f = r_.field(p, "ecn", Need::kOptional)) load_ecn(*f, &out->ecn.emplace());
    for (const ConfigSections* sections : all_config_sections()) {
      const PortSection& section = sections->in_port;
      if (section.key.empty()) continue;
      if (auto f = r_.field(p, section.key, Need::kOptional)) section.parse(r_, *f, out);
    }
  }

  // Exactly one of device / link / pcap; delay and loss only with link.
  void load_attachment(const Field& p, PortConfig* out) {
    const auto device = r_.field(p, "device", Need::kOptional);
    const auto link = r_.field(p, "link", Need::kOptional);
    const auto pcap = r_.field(p, "pcap", Need::kOptional);
    if (device) set(r_.string(*device), &out->device);
    if (link) load_link_peer(*link, out);
    if (pcap) load_pcap(*pcap, &out->pcap.emplace());
    const int given = int(device.has_value()) + int(link.has_value()) + int(pcap.has_value());
    if (given == 0) {
      r_.error(p.node, p.path + ".device", "missing required key \"device\", \"link\" or \"pcap\"");
    } else if (given > 1) {
      const Field& second = link && device ? *link : *pcap;
      // At the key's line: a map value's own mark is the line below it.
      r_.error(YAML::Node(), second.path, "give only one of device, link or pcap");
    }
    if (auto delay = r_.field(p, "delay", Need::kOptional)) {
      if (link || pcap)
        set(r_.duration(*delay, 0, UINT64_MAX), &out->link_delay_ns);
      else
        r_.error(delay->node, delay->path,
                 "\"delay\" applies only to internal links (link:) and capture-file hosts (pcap:)");
    }
    if (auto loss = r_.field(p, "loss", Need::kOptional)) {
      if (link)
        set(r_.probability(*loss), &out->link_loss);
      else
        r_.error(loss->node, loss->path, "\"loss\" applies only to internal links (link:)");
    }
    if (auto fifo = r_.field(p, "fifo", Need::kOptional)) {
      if (link)
        set(r_.duration(*fifo, 1, UINT64_MAX), &out->link_fifo_ns);
      else
        r_.error(fifo->node, fifo->path, "\"fifo\" applies only to internal links (link:)");
    }
    if (auto f = r_.field(p, "cut_through", Need::kOptional)) {
      if (!out->device.empty())
        set(r_.boolean(*f), &out->cut_through);
      else
        r_.error(f->node, f->path, "\"cut_through\" applies only to device ports (device:)");
    }
    if (auto burst = r_.field(p, "shaper_burst", Need::kOptional)) {
      if (!link)
        set(r_.size(*burst, 1, UINT64_MAX), &out->shaper_burst_bytes);
      else
        r_.error(burst->node, burst->path,
                 "\"shaper_burst\" does not apply to internal links (they pace themselves: fifo)");
    }
  }

  void load_link_peer(const Field& link, PortConfig* out) {
    const auto text = r_.string(link);
    if (!text) return;
    if (parse_port_ref(*text)) {
      out->link_peer = *text;
    } else {
      r_.error(link.node, link.path,
               "expected switch/port such as s2/p1, got " + YamlReader::describe(link.node));
    }
  }

  // A capture-file port: rx and/or tx file, and how rx is replayed.
  void load_pcap(const Field& pc, PcapPortConfig* out) {
    if (!r_.expect_map(pc, {"rx", "tx", "mode", "loop", "speed", "snaplen"})) return;
    const auto rx = r_.field(pc, "rx", Need::kOptional);
    const auto tx = r_.field(pc, "tx", Need::kOptional);
    if (rx) {
      set(file_path(*rx), &out->rx_path);
      out->rx_line = YamlReader::line_of(rx->node);
    }
    if (tx) set(file_path(*tx), &out->tx_path);
    if (const auto snaplen = r_.field(pc, "snaplen", Need::kOptional)) {
      if (tx)
        set(r_.integer(*snaplen, 64, 65535), &out->snaplen);
      else
        r_.error(snaplen->node, snaplen->path,
                 "\"snaplen\" applies only to a written capture (tx)");
    }
    // Neither rx nor tx is a transport host's (config_validate.cc).
    const auto mode = r_.field(pc, "mode", Need::kOptional);
    const auto loop = r_.field(pc, "loop", Need::kOptional);
    const auto speed = r_.field(pc, "speed", Need::kOptional);
    if (!rx && tx) {
      for (const auto* f : {&mode, &loop, &speed}) {
        if (*f)
          r_.error((*f)->node, (*f)->path, "this key applies only to a replayed capture (rx)");
      }
      return;
    }
    if (mode) {
      set(r_.choice<PcapReplayMode>(
              *mode, {{"paced", PcapReplayMode::kPaced}, {"fast", PcapReplayMode::kFast}}),
          &out->mode);
    }
    if (loop) set(r_.boolean(*loop), &out->loop);
    if (speed) {
      if (out->mode == PcapReplayMode::kPaced)
        set(r_.real(*speed, 0.0, INFINITY), &out->speed);
      else
        r_.error(speed->node, speed->path, "\"speed\" applies only to mode paced");
    }
  }

  std::optional<std::string> file_path(const Field& f) {
    auto text = r_.string(f);
    if (text && text->empty()) {
      r_.error(f.node, f.path, "expected a file path, got \"\"");
      return std::nullopt;
    }
    return text;
  }

  std::optional<MacAddr> mac(const Field& f) {
    const auto text = r_.string(f);
    MacAddr m{};
    if (!text) return std::nullopt;
    if (!parse_mac(*text, &m)) {
      r_.error(
          f.node, f.path,
          "expected a MAC address such as 02:00:00:00:00:01, got " + YamlReader::describe(f.node));
      return std::nullopt;
    }
    if (m[0] & 1) {
      r_.error(f.node, f.path,
               "expected a unicast MAC address, got " + YamlReader::describe(f.node));
      return std::nullopt;
    }
    return m;
  }

  std::optional<uint32_t> ipv4(const Field& f) {
    const auto text = r_.string(f);
    uint32_t addr = 0;
    if (!text) return std::nullopt;
    if (!parse_ipv4(*text, &addr)) {
      r_.error(f.node, f.path,
               "expected an IPv4 address such as 10.0.0.2, got " + YamlReader::describe(f.node));
      return std::nullopt;
    }
    return addr;
  }

  std::optional<Ipv4Prefix> port_address(const Field& f) {
    const auto text = r_.string(f);
    if (!text) return std::nullopt;
    const auto p = parse_address_with_length(*text);
    if (!p || p->len == 0) {
      r_.error(f.node, f.path,
               "expected an address with prefix length such as 10.0.0.1/24, got " +
                   YamlReader::describe(f.node));
      return std::nullopt;
    }
    return p;
  }

  std::optional<Ipv4Prefix> route_prefix(const Field& f) {
    const auto text = r_.string(f);
    if (!text) return std::nullopt;
    const auto p = parse_address_with_length(*text);
    if (!p) {
      r_.error(f.node, f.path,
               "expected a prefix such as 10.0.1.0/24, got " + YamlReader::describe(f.node));
      return std::nullopt;
    }
    const uint32_t network = p->addr & prefix_mask(p->len);
    if (network != p->addr) {
      r_.error(f.node, f.path,
               "prefix " + *text + " has host bits set; did you mean " + format_ipv4(network) +
                   "/" + std::to_string(p->len) + "?");
      return std::nullopt;
    }
    return p;
  }

  void load_route(const Field& rt, RouteConfig* out) {
    out->line = YamlReader::line_of(rt.node);
    if (!r_.expect_map(rt, {"prefix", "ports", "port"})) return;
    if (auto f = r_.field(rt, "prefix", Need::kRequired)) set(route_prefix(*f), &out->prefix);
    const auto one = r_.field(rt, "port", Need::kOptional);
    const auto many = r_.field(rt, "ports", Need::kOptional);
    if (one && many) {
      r_.error(one->node, one->path, "give either port or ports, not both");
    } else if (one) {
      if (auto name = r_.string(*one)) out->ports.push_back(*name);
    } else if (many) {
      if (auto items = r_.list(*many)) {
        if (items->empty()) r_.error(many->node, many->path, "expected at least one port");
        for (const Field& item : *items) {
          if (auto name = r_.string(item)) out->ports.push_back(*name);
        }
      }
    } else {
      r_.error(rt.node, rt.path + ".ports", "missing required key \"ports\" (or \"port\")");
    }
  }

  void load_worker(const Field& w, WorkerConfig* out) {
    out->line = YamlReader::line_of(w.node);
    if (!r_.expect_map(w, {"lcore", "ports", "receive"})) return;
    if (auto f = r_.field(w, "lcore", Need::kRequired)) set(r_.integer(*f, 0, 1023), &out->lcore);
    // A worker owns ports, receives a share of other workers' ports, or both.
    auto receive = r_.field(w, "receive", Need::kOptional);
    if (receive) load_port_refs(*receive, &out->receive);
    if (auto f = r_.field(w, "ports", Need::kOptional)) {
      load_port_refs(*f, &out->ports);
    } else if (!receive) {
      r_.error(w.node, w.path + ".ports", "missing required key \"ports\" (or \"receive\")");
    }
  }

  void load_port_refs(const Field& f, std::vector<PortRef>* out) {
    auto items = r_.list(f);
    if (!items) return;
    if (items->empty()) r_.error(f.node, f.path, "expected at least one port");
    for (const Field& item : *items) {
      const auto text = r_.string(item);
      if (!text) {
        out->emplace_back();  // keep indices aligned with the file
        continue;
      }
      const auto ref = parse_port_ref(*text);
      if (!ref) {
        r_.error(item.node, item.path,
                 "expected switch/port such as s1/p0, got " + YamlReader::describe(item.node));
      }
      out->push_back(ref.value_or(PortRef{}));
    }
  }

  YamlReader r_;
};

}  // namespace

std::string ConfigError::to_string() const {
  std::string out = file;
  if (line > 0) out += ":" + std::to_string(line);
  out += ": ";
  if (!key.empty()) out += key + ": ";
  return out + message;
}

ConfigResult load_config_string(std::string_view yaml, const std::string& file_name) {
  ConfigResult result;
  result.config.file = file_name;
  KeyLines lines;
  YAML::Node root;
  try {
    root = YAML::Load(std::string(yaml));
  } catch (const YAML::Exception& e) {
    const int line = e.mark.line < 0 ? 0 : e.mark.line + 1;
    result.errors.push_back(ConfigError{file_name, line, "", "YAML syntax error: " + e.msg});
    return result;
  }
  try {
    Loader(file_name, &result.errors, &lines).load(root, &result.config);
  } catch (const YAML::Exception& e) {
    // Not expected: the reader checks node types before converting.
    const int line = e.mark.line < 0 ? 0 : e.mark.line + 1;
    result.errors.push_back(ConfigError{file_name, line, "", "YAML error: " + e.msg});
    return result;
  }
  validate_config(result.config, lines, &result.errors, &result.notes);
  // In file order, so the first error a reader sees is the first in the file.
  for (auto* list : {&result.errors, &result.notes}) {
    std::stable_sort(list->begin(), list->end(),
                     [](const ConfigError& a, const ConfigError& b) { return a.line < b.line; });
  }
  return result;
}

ConfigResult load_config_file(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) {
    ConfigResult result;
    result.config.file = path;
    result.errors.push_back(ConfigError{path, 0, "", "cannot open the file for reading"});
    return result;
  }
  std::ostringstream text;
  text << in.rdbuf();
  return load_config_string(text.str(), path);
}

}  // namespace sluice
