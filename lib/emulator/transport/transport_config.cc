#include "lib/emulator/transport/transport_config.h"

#include <map>
#include <string>

#include "lib/config/config_check.h"
#include "lib/config/config_section.h"
#include "lib/config/config_validate.h"
#include "lib/config/yaml_reader.h"

namespace sluice {
namespace {

constexpr uint64_t kMaxTimerNs = 100'000'000'000;  // 100 s

void parse_tcp(YamlReader& r, const Field& t, TcpParams* out) {
  if (!r.expect_map(t, {"ecn", "init_cwnd", "min_rto", "initial_rto", "max_rto", "fast_retransmit",
                        "dupack_threshold", "dctcp_g", "dctcp_initial_alpha", "dctcp_cut",
                        "ack_every", "delayed_ack"}))
    return;
  if (auto f = r.field(t, "ecn", Need::kOptional)) set(r.boolean(*f), &out->ecn);
  if (auto f = r.field(t, "init_cwnd", Need::kOptional))
    set(r.integer(*f, 1, 1000), &out->init_cwnd_segments);
  if (auto f = r.field(t, "min_rto", Need::kOptional))
    set(r.duration(*f, 1000, kMaxTimerNs), &out->min_rto_ns);
  if (auto f = r.field(t, "initial_rto", Need::kOptional))
    set(r.duration(*f, 1000, kMaxTimerNs), &out->initial_rto_ns);
  if (auto f = r.field(t, "max_rto", Need::kOptional))
    set(r.duration(*f, 1000, kMaxTimerNs), &out->max_rto_ns);
  if (auto f = r.field(t, "fast_retransmit", Need::kOptional))
    set(r.boolean(*f), &out->fast_retransmit);
  if (auto f = r.field(t, "dupack_threshold", Need::kOptional))
    set(r.integer(*f, 1, 100), &out->dupack_threshold);
  if (auto f = r.field(t, "dctcp_g", Need::kOptional)) set(r.real(*f, 0, 1), &out->dctcp_g);
  if (auto f = r.field(t, "dctcp_initial_alpha", Need::kOptional))
    set(r.probability(*f), &out->dctcp_initial_alpha);
  if (auto f = r.field(t, "dctcp_cut", Need::kOptional))
    set(r.choice<DctcpCut>(
            *f, {{"on_echo", DctcpCut::kOnEcho}, {"every_window", DctcpCut::kEveryWindow}}),
        &out->dctcp_cut);
  if (auto f = r.field(t, "ack_every", Need::kOptional)) set(r.integer(*f, 1, 64), &out->ack_every);
  if (auto f = r.field(t, "delayed_ack", Need::kOptional))
    set(r.duration(*f, 1, kMaxTimerNs), &out->delayed_ack_ns);
}

void parse_rdma(YamlReader& r, const Field& t, GbnParams* out) {
  if (!r.expect_map(t, {"ack_every", "cnp_interval", "timeout", "nack_once_per_gap", "window",
                        "window_follows_rate"}))
    return;
  if (auto f = r.field(t, "window", Need::kOptional))
    set(r.size(*f, 0, uint64_t{1} << 30), &out->window_bytes);
  if (auto f = r.field(t, "window_follows_rate", Need::kOptional))
    set(r.boolean(*f), &out->window_follows_rate);
  if (auto f = r.field(t, "ack_every", Need::kOptional)) set(r.integer(*f, 1, 64), &out->ack_every);
  if (auto f = r.field(t, "cnp_interval", Need::kOptional))
    set(r.duration(*f, 0, kMaxTimerNs), &out->cnp_interval_ns);
  if (auto f = r.field(t, "timeout", Need::kOptional))
    set(r.duration(*f, 0, kMaxTimerNs), &out->rto_ns);
  if (auto f = r.field(t, "nack_once_per_gap", Need::kOptional))
    set(r.boolean(*f), &out->nack_once_per_gap);
}

void parse_dcqcn(YamlReader& r, const Field& t, DcqcnParams* out) {
  if (!r.expect_map(t, {"rules", "g", "alpha_interval", "rate_timer", "byte_counter",
                        "fast_recovery_stages", "rate_ai", "rate_hai", "min_rate",
                        "clamp_target_rate", "decrease_interval", "ue_aware"}))
    return;
  if (auto f = r.field(t, "rules", Need::kOptional))
    set(r.choice<DcqcnParams::Rules>(
            *f, {{"paper", DcqcnParams::Rules::kPaper}, {"ns3-mlx", DcqcnParams::Rules::kNs3Mlx}}),
        &out->rules);
  if (auto f = r.field(t, "decrease_interval", Need::kOptional))
    set(r.duration(*f, 1, kMaxTimerNs), &out->decrease_interval_ns);
  if (auto f = r.field(t, "g", Need::kOptional)) set(r.real(*f, 0, 1), &out->g);
  if (auto f = r.field(t, "alpha_interval", Need::kOptional))
    set(r.duration(*f, 1, kMaxTimerNs), &out->alpha_interval_ns);
  if (auto f = r.field(t, "rate_timer", Need::kOptional))
    set(r.duration(*f, 1, kMaxTimerNs), &out->rate_timer_ns);
  if (auto f = r.field(t, "byte_counter", Need::kOptional))
    set(r.size(*f, 1, UINT64_MAX), &out->byte_counter_bytes);
  if (auto f = r.field(t, "fast_recovery_stages", Need::kOptional))
    set(r.integer(*f, 0, 1000), &out->fast_recovery_stages);
  if (auto f = r.field(t, "rate_ai", Need::kOptional)) set(r.rate(*f), &out->rate_ai_bps);
  if (auto f = r.field(t, "rate_hai", Need::kOptional)) set(r.rate(*f), &out->rate_hai_bps);
  if (auto f = r.field(t, "min_rate", Need::kOptional)) set(r.rate(*f), &out->min_rate_bps);
  if (auto f = r.field(t, "clamp_target_rate", Need::kOptional))
    set(r.boolean(*f), &out->clamp_target_rate);
  if (auto f = r.field(t, "ue_aware", Need::kOptional)) set(r.boolean(*f), &out->ue_aware);
}

void parse_hpcc(YamlReader& r, const Field& t, HpccParams* out) {
  if (!r.expect_map(t, {"eta", "max_stage", "w_ai", "expected_flows", "min_rate"})) return;
  if (auto f = r.field(t, "eta", Need::kOptional)) set(r.real(*f, 0, 1), &out->eta);
  if (auto f = r.field(t, "max_stage", Need::kOptional))
    set(r.integer(*f, 0, 1000), &out->max_stage);
  if (auto f = r.field(t, "w_ai", Need::kOptional))
    set(r.size(*f, 1, UINT32_MAX), &out->w_ai_bytes);
  if (auto f = r.field(t, "expected_flows", Need::kOptional))
    set(r.integer(*f, 1, 1u << 20), &out->expected_flows);
  if (auto f = r.field(t, "min_rate", Need::kOptional)) set(r.rate(*f), &out->min_rate_bps);
}

void parse_timely(YamlReader& r, const Field& t, TimelyParams* out) {
  if (!r.expect_map(t, {"alpha", "beta", "delta", "t_low", "t_high", "min_rtt", "hai_after",
                        "hai_factor", "min_rate", "completion_bytes", "ue_aware"}))
    return;
  if (auto f = r.field(t, "alpha", Need::kOptional)) set(r.real(*f, 0, 1), &out->alpha);
  if (auto f = r.field(t, "beta", Need::kOptional)) set(r.real(*f, 0, 2), &out->beta);
  if (auto f = r.field(t, "delta", Need::kOptional)) set(r.rate(*f), &out->delta_bps);
  if (auto f = r.field(t, "t_low", Need::kOptional))
    set(r.duration(*f, 0, kMaxTimerNs), &out->t_low_ns);
  if (auto f = r.field(t, "t_high", Need::kOptional))
    set(r.duration(*f, 1, kMaxTimerNs), &out->t_high_ns);
  if (auto f = r.field(t, "min_rtt", Need::kOptional))
    set(r.duration(*f, 1, kMaxTimerNs), &out->min_rtt_ns);
  if (auto f = r.field(t, "hai_after", Need::kOptional))
    set(r.integer(*f, 1, 1000), &out->hai_after);
  if (auto f = r.field(t, "hai_factor", Need::kOptional))
    set(r.integer(*f, 1, 1000), &out->hai_factor);
  if (auto f = r.field(t, "min_rate", Need::kOptional)) set(r.rate(*f), &out->min_rate_bps);
  if (auto f = r.field(t, "completion_bytes", Need::kOptional))
    set(r.size(*f, 0, UINT32_MAX), &out->completion_bytes);
  if (auto f = r.field(t, "ue_aware", Need::kOptional)) set(r.boolean(*f), &out->ue_aware);
}

void parse_pfabric(YamlReader& r, const Field& t, PfabricParams* out) {
  if (!r.expect_map(t, {"init_window", "rto", "probe_after", "max_window"})) return;
  if (auto f = r.field(t, "init_window", Need::kOptional))
    set(r.size(*f, 0, uint64_t{1} << 30), &out->init_window_bytes);
  if (auto f = r.field(t, "rto", Need::kOptional))
    set(r.duration(*f, 0, kMaxTimerNs), &out->rto_ns);
  if (auto f = r.field(t, "probe_after", Need::kOptional))
    set(r.integer(*f, 0, 1000), &out->probe_after);
  if (auto f = r.field(t, "max_window", Need::kOptional))
    set(r.size(*f, 0, uint64_t{1} << 30), &out->max_window_bytes);
}

// Emulated transport hosts (docs/configuration.md "Emulated hosts running transports").
void parse_transport(YamlReader& r, const Field& t, Config* c) {
  TransportConfig* out = &c->transport;
  out->line = YamlReader::line_of(t.node);
  if (!r.expect_map(t, {"kind", "flows", "completions", "mss", "base_rtt", "data_dscp", "ack_dscp",
                        "ttl", "tcp", "rdma", "dcqcn", "hpcc", "timely", "bfc_nic", "pfabric"}))
    return;
  if (auto f = r.field(t, "kind", Need::kRequired)) {
    set(r.choice<TransportKind>(*f, {{"none", TransportKind::kNone},
                                     {"tcp", TransportKind::kTcp},
                                     {"dctcp", TransportKind::kDctcp},
                                     {"dcqcn", TransportKind::kDcqcn},
                                     {"hpcc", TransportKind::kHpcc},
                                     {"timely", TransportKind::kTimely},
                                     {"bfc-nic", TransportKind::kBfcNic},
                                     {"pfabric", TransportKind::kPfabric}}),
        &out->kind);
  }
  const Need need = out->kind == TransportKind::kNone ? Need::kOptional : Need::kRequired;
  if (auto f = r.field(t, "flows", need)) set(r.string(*f), &out->flows_path);
  if (auto f = r.field(t, "completions", Need::kOptional))
    set(r.string(*f), &out->completions_path);
  if (auto f = r.field(t, "mss", Need::kOptional)) set(r.size(*f, 64, 9000), &out->mss);
  if (auto f = r.field(t, "base_rtt", Need::kOptional))
    set(r.duration(*f, 1, 1'000'000'000), &out->base_rtt_ns);
  if (auto f = r.field(t, "data_dscp", Need::kOptional)) set(r.integer(*f, 0, 63), &out->data_dscp);
  if (auto f = r.field(t, "ack_dscp", Need::kOptional)) set(r.integer(*f, 0, 63), &out->ack_dscp);
  if (auto f = r.field(t, "ttl", Need::kOptional)) set(r.integer(*f, 1, 255), &out->ttl);
  if (auto f = r.field(t, "tcp", Need::kOptional)) parse_tcp(r, *f, &out->tcp);
  if (auto f = r.field(t, "rdma", Need::kOptional)) parse_rdma(r, *f, &out->rdma);
  if (auto f = r.field(t, "dcqcn", Need::kOptional)) parse_dcqcn(r, *f, &out->dcqcn);
  if (auto f = r.field(t, "hpcc", Need::kOptional)) parse_hpcc(r, *f, &out->hpcc);
  if (auto f = r.field(t, "timely", Need::kOptional)) parse_timely(r, *f, &out->timely);
  if (auto f = r.field(t, "pfabric", Need::kOptional)) parse_pfabric(r, *f, &out->pfabric);
  if (auto f = r.field(t, "bfc_nic", Need::kOptional)) {
    if (r.expect_map(*f, {"window"})) {
      if (auto w = r.field(*f, "window", Need::kOptional))
        set(r.size(*w, 0, UINT32_MAX), &out->bfc_window_bytes);
    }
  }
}

// pFabric's windows hold at least a segment and the cap holds the first
// window; a fixed timeout below the base RTT would fire before any ACK
// could come back.
void validate_pfabric(ConfigCheck& k, const TransportConfig& t) {
  const PfabricParams& p = t.pfabric;
  const std::string mss = std::to_string(t.mss);
  if (p.init_window_bytes != 0 && p.init_window_bytes < t.mss)
    k.error("transport.pfabric.init_window", "a window of " + std::to_string(p.init_window_bytes) +
                                                 " bytes holds no segment of mss " + mss +
                                                 ": give 0 (one BDP) or at least " + mss);
  if (p.max_window_bytes != 0 && p.max_window_bytes < t.mss)
    k.error("transport.pfabric.max_window", "a cap of " + std::to_string(p.max_window_bytes) +
                                                " bytes holds no segment of mss " + mss +
                                                ": give 0 (none) or at least " + mss);
  if (p.max_window_bytes != 0 && p.init_window_bytes > p.max_window_bytes)
    k.error("transport.pfabric.max_window", "the cap (" + std::to_string(p.max_window_bytes) +
                                                " bytes) is below init_window (" +
                                                std::to_string(p.init_window_bytes) + " bytes)");
  if (p.rto_ns != 0 && p.rto_ns < t.base_rtt_ns)
    k.error("transport.pfabric.rto", "a fixed timeout of " + std::to_string(p.rto_ns) +
                                         " ns fires before an ACK can return (base_rtt " +
                                         std::to_string(t.base_rtt_ns) +
                                         " ns): give 0 (three base RTTs) or at least base_rtt");
}

// Transport hosts (docs/configuration.md "Emulated hosts running transports"): every
// capture-file host port without rx runs the transport, in exact fabric
// time, at its peer_ip; its frames must fit every port's MTU; HPCC's
// senders need every switch to stamp INT.
void validate_transport(ConfigCheck& k) {
  const Config& c = k.config();
  const TransportConfig& t = c.transport;
  if (t.kind == TransportKind::kNone) return;
  if (c.clock.mode != ClockMode::kExact)
    k.error("transport.kind", "transport hosts run in exact fabric time only (clock.mode exact)");
  if (t.kind == TransportKind::kPfabric) validate_pfabric(k, t);
  if (t.rdma.window_follows_rate && t.rdma.window_bytes == 0)
    k.error("transport.rdma.window_follows_rate",
            "a window that follows the rate needs rdma.window (the window at line rate)");
  const bool int_room = t.kind == TransportKind::kHpcc;
  // pFabric's data carries its rank (docs/wire-formats.md "Transport frames").
  const uint32_t options = t.kind == TransportKind::kPfabric ? 4 : 0;
  const uint32_t ip_bytes = 20 + 8 + 28 + options + (int_room ? 80 : 0) + t.mss;
  // A host builds each frame in one mbuf (and a BFC NIC adds its shim).
  if (14 + ip_bytes + 6 > c.mbuf_size)
    k.error("transport.mss", "transport frames of mss " + std::to_string(t.mss) + " are " +
                                 std::to_string(14 + ip_bytes) +
                                 " bytes (with a BFC NIC's shim 6 more), more than mbuf_size " +
                                 std::to_string(c.mbuf_size) + ": raise mbuf_size");
  std::map<uint32_t, std::string> owner;
  size_t hosts = 0;
  for (size_t s = 0; s < c.switches.size(); ++s) {
    const SwitchConfig& sw = c.switches[s];
    if (t.kind == TransportKind::kHpcc && !sw.int_telemetry)
      k.error(switch_key(s), "transport kind hpcc needs INT on every switch, and switch " +
                                 sw.name + " does not stamp it (add `int: {enabled: true}`)");
    for (size_t p = 0; p < sw.ports.size(); ++p) {
      const PortConfig& port = sw.ports[p];
      const std::string path = port_key(s, p);
      if (port.mtu < ip_bytes)
        k.error(path + ".mtu", "transport segments of mss " + std::to_string(t.mss) + " are " +
                                   std::to_string(ip_bytes) +
                                   "-byte IP packets, more than this port's mtu " +
                                   std::to_string(port.mtu));
      if (!is_transport_host_port(c, port)) continue;
      ++hosts;
      if (!port.peer_ipv4) {
        k.error(path, "a transport host port needs peer_ip (the host's address)");
        continue;
      }
      const auto [it, fresh] = owner.emplace(*port.peer_ipv4, sw.name + "/" + port.name);
      if (!fresh) k.error(path + ".peer_ip", "the same host address as " + it->second);
    }
  }
  if (hosts == 0)
    k.error("transport", "no port runs the transport: give host ports a pcap section without rx");
}

}  // namespace

const ConfigSections kTransportSections{
    .top = {.key = "transport", .parse = parse_transport, .validate = validate_transport},
};

}  // namespace sluice
