// The top-level transport: section (lib/emulator/transport/transport_config.cc).
#include <gtest/gtest.h>

#include <string>

#include "lib/config/config_loader.h"

namespace sluice {
namespace {

constexpr const char* kFile = "test.yaml";

// The transport section (docs/configuration.md "Emulated hosts running transports"), INT and
// Flowtune's endpoint pacing.
constexpr const char* kTransport = R"(clock: {mode: exact}
flowtune_allocator: {}
transport:
  kind: dctcp
  flows: w/flows.csv
  completions: c.csv
  mss: 1400
  base_rtt: 12us
  ack_dscp: 46
  tcp: {min_rto: 10ms, fast_retransmit: false, init_cwnd: 4, ack_every: 2, delayed_ack: 20us,
        dctcp_initial_alpha: 0, dctcp_cut: every_window}
  rdma: {ack_every: 2, cnp_interval: 60us, timeout: 1ms, nack_once_per_gap: false, window: 65000,
         window_follows_rate: true}
  dcqcn: {rules: ns3-mlx, g: 0.5, rate_ai: 5Mbps, decrease_interval: 8us, ue_aware: true}
  hpcc: {eta: 0.9, max_stage: 0, expected_flows: 64}
  timely: {t_low: 40us, t_high: 400us, ue_aware: true}
  bfc_nic: {window: 64KB}
switches:
  - name: s1
    int: {}
    flowtune: {pace_at: host}
    ports:
      - {name: h0, role: host, rate: 10Gbps, mtu: 1600, peer_ip: 10.0.0.2, pcap: {tx: a.pcap}}
      - {name: h1, role: host, rate: 10Gbps, mtu: 1600, peer_ip: 10.0.1.2, pcap: {}}
)";

TEST(TransportConfig, Section) {
  const ConfigResult r = load_config_string(kTransport, kFile);
  for (const ConfigError& e : r.errors) ADD_FAILURE() << e.to_string();
  ASSERT_TRUE(r.ok());
  const TransportConfig& t = r.config.transport;
  EXPECT_EQ(t.kind, TransportKind::kDctcp);
  EXPECT_EQ(t.flows_path, "w/flows.csv");
  EXPECT_EQ(t.completions_path, "c.csv");
  EXPECT_EQ(t.mss, 1400u);
  EXPECT_EQ(t.base_rtt_ns, 12'000u);
  EXPECT_EQ(t.ack_dscp, 46);
  EXPECT_EQ(t.tcp.min_rto_ns, 10'000'000u);
  EXPECT_FALSE(t.tcp.fast_retransmit);
  EXPECT_EQ(t.tcp.init_cwnd_segments, 4u);
  EXPECT_EQ(t.tcp.ack_every, 2u);
  EXPECT_EQ(t.tcp.delayed_ack_ns, 20'000u);
  EXPECT_DOUBLE_EQ(t.tcp.dctcp_initial_alpha, 0.0);
  EXPECT_EQ(t.tcp.dctcp_cut, DctcpCut::kEveryWindow);
  EXPECT_EQ(t.rdma.ack_every, 2u);
  EXPECT_EQ(t.rdma.cnp_interval_ns, 60'000u);
  EXPECT_EQ(t.rdma.rto_ns, 1'000'000u);
  EXPECT_FALSE(t.rdma.nack_once_per_gap);
  EXPECT_EQ(t.rdma.window_bytes, 65'000u);
  EXPECT_TRUE(t.rdma.window_follows_rate);
  EXPECT_EQ(t.dcqcn.rules, DcqcnParams::Rules::kNs3Mlx);
  EXPECT_EQ(t.dcqcn.decrease_interval_ns, 8'000u);
  EXPECT_DOUBLE_EQ(t.dcqcn.g, 0.5);
  EXPECT_EQ(t.dcqcn.rate_ai_bps, 5'000'000u);
  EXPECT_TRUE(t.dcqcn.ue_aware);
  EXPECT_DOUBLE_EQ(t.hpcc.eta, 0.9);
  EXPECT_EQ(t.hpcc.max_stage, 0u);
  EXPECT_EQ(t.hpcc.expected_flows, 64u);
  EXPECT_EQ(t.timely.t_low_ns, 40'000u);
  EXPECT_EQ(t.timely.t_high_ns, 400'000u);
  EXPECT_TRUE(t.timely.ue_aware);
  EXPECT_EQ(t.bfc_window_bytes, 64'000u);
  EXPECT_TRUE(r.config.switches[0].int_telemetry);
  EXPECT_TRUE(r.config.switches[0].flowtune.pace_at_host);
}

TEST(TransportConfig, Refusals) {
  auto errors_of = [](std::string text) {
    const ConfigResult r = load_config_string(text, kFile);
    std::string all;
    for (const ConfigError& e : r.errors) all += e.to_string() + "\n";
    return all;
  };
  auto replace = [](std::string s, const std::string& from, const std::string& to) {
    const size_t at = s.find(from);
    EXPECT_NE(at, std::string::npos) << from;
    if (at != std::string::npos) s.replace(at, from.size(), to);
    return s;
  };
  const std::string ok = kTransport;
  EXPECT_NE(errors_of(replace(ok, "clock: {mode: exact}", "clock: {mode: real}"))
                .find("transport hosts run in exact fabric time only"),
            std::string::npos);
  EXPECT_NE(errors_of(replace(ok, "kind: dctcp", "kind: hpcc"))
                .find("pace_at: host needs hosts that pace themselves"),
            std::string::npos);
  EXPECT_NE(errors_of(replace(replace(ok, "    int: {}\n", ""), "kind: dctcp", "kind: hpcc"))
                .find("transport kind hpcc needs INT on every switch"),
            std::string::npos);
  EXPECT_NE(errors_of(replace(ok, "mtu: 1600, peer_ip: 10.0.0.2", "mtu: 1400, peer_ip: 10.0.0.2"))
                .find("more than this port's mtu 1400"),
            std::string::npos);
  EXPECT_NE(errors_of(replace(ok, "peer_ip: 10.0.1.2", "peer_ip: 10.0.0.2"))
                .find("the same host address as s1/h0"),
            std::string::npos);
  EXPECT_NE(errors_of(replace(ok, "mss: 1400", "mss: 2000"))
                .find("more than mbuf_size 2048: raise mbuf_size"),
            std::string::npos);
  EXPECT_NE(errors_of(replace(ok, "kind: dctcp", "kind: quic")).find("quic"), std::string::npos);
  EXPECT_NE(errors_of(replace(ok, "dctcp_cut: every_window", "dctcp_cut: sometimes"))
                .find("expected one of on_echo, every_window, got \"sometimes\""),
            std::string::npos);
  EXPECT_NE(errors_of(replace(ok, "dctcp_initial_alpha: 0", "dctcp_initial_alpha: 2"))
                .find("dctcp_initial_alpha"),
            std::string::npos);
  EXPECT_NE(errors_of(replace(ok, "  flows: w/flows.csv\n", "")).find("flows"), std::string::npos);
}

// pFabric's hosts: their section and --check's refusals.
constexpr const char* kPfabric = R"(clock: {mode: exact}
transport:
  kind: pfabric
  flows: w/flows.csv
  mss: 1400
  base_rtt: 12us
  pfabric: {init_window: 14000, rto: 40us, probe_after: 3, max_window: 28000}
switches:
  - name: s1
    ports:
      - {name: h0, role: host, rate: 10Gbps, mtu: 1460, peer_ip: 10.0.0.2, pcap: {}}
      - {name: h1, role: host, rate: 10Gbps, mtu: 1460, peer_ip: 10.0.1.2, pcap: {}}
)";

TEST(TransportConfig, Pfabric) {
  const ConfigResult r = load_config_string(kPfabric, kFile);
  for (const ConfigError& e : r.errors) ADD_FAILURE() << e.to_string();
  ASSERT_TRUE(r.ok());
  const TransportConfig& t = r.config.transport;
  EXPECT_EQ(t.kind, TransportKind::kPfabric);
  EXPECT_EQ(t.pfabric.init_window_bytes, 14'000u);
  EXPECT_EQ(t.pfabric.rto_ns, 40'000u);
  EXPECT_EQ(t.pfabric.probe_after, 3u);
  EXPECT_EQ(t.pfabric.max_window_bytes, 28'000u);
  // The defaults: derived from the fabric (0), probe mode after 5.
  std::string bare = kPfabric;
  const size_t at = bare.find("  pfabric:");
  bare.erase(at, bare.find('\n', at) + 1 - at);
  const ConfigResult d = load_config_string(bare, kFile);
  for (const ConfigError& e : d.errors) ADD_FAILURE() << e.to_string();
  EXPECT_EQ(d.config.transport.pfabric.init_window_bytes, 0u);
  EXPECT_EQ(d.config.transport.pfabric.rto_ns, 0u);
  EXPECT_EQ(d.config.transport.pfabric.probe_after, 5u);
  EXPECT_EQ(d.config.transport.pfabric.max_window_bytes, 0u);
}

// A window that follows the rate scales rdma.window: without one it is refused.
TEST(TransportConfig, WindowFollowingTheRateNeedsAWindow) {
  std::string text = kTransport;
  const std::string from = "window: 65000,";
  const size_t at = text.find(from);
  ASSERT_NE(at, std::string::npos);
  text.erase(at, from.size());
  const ConfigResult r = load_config_string(text, kFile);
  std::string all;
  for (const ConfigError& e : r.errors) all += e.to_string() + "\n";
  EXPECT_NE(all.find("transport.rdma.window_follows_rate: a window that follows the rate needs "
                     "rdma.window"),
            std::string::npos)
      << all;
}

TEST(TransportConfig, PfabricRefusals) {
  auto errors_of = [](const std::string& from, const std::string& to) {
    std::string text = kPfabric;
    const size_t at = text.find(from);
    EXPECT_NE(at, std::string::npos) << from;
    if (at != std::string::npos) text.replace(at, from.size(), to);
    const ConfigResult r = load_config_string(text, kFile);
    std::string all;
    for (const ConfigError& e : r.errors) all += e.to_string() + "\n";
    return all;
  };
  EXPECT_NE(errors_of("init_window: 14000", "init_window: 500")
                .find("transport.pfabric.init_window: a window of 500 bytes holds no segment"),
            std::string::npos);
  EXPECT_NE(errors_of("max_window: 28000", "max_window: 1000")
                .find("a cap of 1000 bytes holds no segment of mss 1400"),
            std::string::npos);
  EXPECT_NE(errors_of("max_window: 28000", "max_window: 7000")
                .find("the cap (7000 bytes) is below init_window (14000 bytes)"),
            std::string::npos);
  EXPECT_NE(errors_of("rto: 40us", "rto: 5us").find("fires before an ACK can return"),
            std::string::npos);
  EXPECT_NE(errors_of("probe_after: 3", "probe_after: 1001").find("probe_after"),
            std::string::npos);
  EXPECT_NE(errors_of("probe_after: 3", "probe_after: -1").find("probe_after"), std::string::npos);
  EXPECT_NE(errors_of("rto: 40us", "rto: soon").find("rto"), std::string::npos);
  EXPECT_NE(errors_of("max_window: 28000", "max_windows: 28000").find("max_windows"),
            std::string::npos);
  // The rank makes a data frame 4 bytes longer than another transport's: a
  // port that holds DCTCP's 1456-byte IP packets of mss 1400 is too short.
  EXPECT_NE(errors_of("mtu: 1460, peer_ip: 10.0.0.2", "mtu: 1456, peer_ip: 10.0.0.2")
                .find("1460-byte IP packets, more than this port's mtu 1456"),
            std::string::npos);
  // Zero means derived, and is not refused.
  EXPECT_EQ(errors_of("init_window: 14000", "init_window: 0"), "");
  EXPECT_EQ(errors_of("rto: 40us", "rto: 0"), "");
}

}  // namespace
}  // namespace sluice
