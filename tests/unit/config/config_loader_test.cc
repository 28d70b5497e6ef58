#include "lib/config/config_loader.h"

#include <gtest/gtest.h>

#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include "tests/unit/config/config_errors.h"

namespace sluice {
namespace {

constexpr const char* kFile = "test.yaml";

// Every key set, mostly to a value other than its default. Line numbers matter
// for nothing here; the error tests below count lines.
constexpr const char* kFull = R"(metrics:
  enabled: false
  address: 0.0.0.0:9200
mbufs: 65536
switches:
  - name: leaf-1
    buffer:
      size: 4MiB
      alpha: 0.5
    queues_per_port: 8
    queue_capacity: 1024
    scheduler: strict
    class_map: dscp
    drr_quantum: 9KB
    ecn:
      mode: red
      min: 50KB
      max: 200KB
      pmax: 0.25
    ports:
      - name: h0
        device: net_pcap0,rx_pcap=a.pcap
        role: host
        rate: 25Gbps
        mtu: 9000
        wire_overhead: 20B
        mac: 02:00:00:00:00:01
        peer_mac: 02:00:00:00:01:01
        peer_ip: 10.0.0.2
        ipv4: 10.0.0.1/24
        hop_rtt: 5us
      - name: up
        link: spine_1/down
        delay: 1.5us
        role: switch
        rate: 100G
    routes:
      - prefix: 10.0.0.0/24
        port: h0
      - prefix: 0.0.0.0/0
        ports: [up]
  - name: spine_1
    ecn:
      mode: step
      k: 100KB
    ports:
      - name: down
        link: leaf-1/up
        delay: 1500ns
        role: switch
        rate: 100Gbit/s
workers:
  - lcore: 3
    ports: [leaf-1/h0]
  - lcore: 5
    ports: [leaf-1/up, spine_1/down]
)";

TEST(ConfigLoader, FullConfigRoundTrip) {
  const ConfigResult r = load_config_string(kFull, kFile);
  for (const ConfigError& e : r.errors) ADD_FAILURE() << e.to_string();
  ASSERT_TRUE(r.ok());
  const Config& c = r.config;
  EXPECT_EQ(c.file, kFile);
  EXPECT_FALSE(c.metrics.enabled);
  EXPECT_EQ(c.metrics.address, "0.0.0.0:9200");
  EXPECT_EQ(c.mbufs, 65536u);
  ASSERT_EQ(c.switches.size(), 2u);

  const SwitchConfig& leaf = c.switches[0];
  EXPECT_EQ(leaf.name, "leaf-1");
  EXPECT_EQ(leaf.line, 6);
  EXPECT_EQ(leaf.buffer.size_bytes, 4u * 1024 * 1024);
  EXPECT_DOUBLE_EQ(leaf.buffer.dt_alpha, 0.5);
  EXPECT_EQ(leaf.tm.queues_per_port, 8u);
  EXPECT_EQ(leaf.tm.queue_capacity_packets, 1024u);
  EXPECT_EQ(leaf.tm.scheduler, SchedulerKind::kStrictPriority);
  EXPECT_EQ(leaf.tm.class_mapping, ClassMapping::kDscp);
  EXPECT_EQ(leaf.tm.drr_quantum_bytes, 9000u);
  EXPECT_EQ(leaf.tm.ecn.mode, EcnMode::kRed);
  EXPECT_EQ(leaf.tm.ecn.red_min_bytes, 50'000u);
  EXPECT_EQ(leaf.tm.ecn.red_max_bytes, 200'000u);
  EXPECT_DOUBLE_EQ(leaf.tm.ecn.red_pmax, 0.25);

  ASSERT_EQ(leaf.ports.size(), 2u);
  const PortConfig& h0 = leaf.ports[0];
  EXPECT_EQ(h0.name, "h0");
  EXPECT_EQ(h0.line, 21);
  EXPECT_EQ(h0.device, "net_pcap0,rx_pcap=a.pcap");
  EXPECT_EQ(h0.link_peer, "");
  EXPECT_EQ(h0.role, PortRole::kHost);
  EXPECT_EQ(h0.rate_bps, 25'000'000'000u);
  EXPECT_EQ(h0.mtu, 9000u);
  EXPECT_EQ(h0.wire_overhead_bytes, 20u);
  EXPECT_EQ(h0.mac, (MacAddr{0x02, 0, 0, 0, 0, 0x01}));
  EXPECT_EQ(h0.peer_mac, (MacAddr{0x02, 0, 0, 0, 0x01, 0x01}));
  EXPECT_EQ(h0.peer_ipv4, 0x0A000002u);
  ASSERT_TRUE(h0.ipv4.has_value());
  EXPECT_EQ(h0.ipv4->addr, 0x0A000001u);
  EXPECT_EQ(h0.ipv4->len, 24);
  EXPECT_EQ(h0.hop_rtt_ns, 5'000u);

  const PortConfig& up = leaf.ports[1];
  EXPECT_EQ(up.name, "up");
  EXPECT_EQ(up.device, "");
  EXPECT_EQ(up.link_peer, "spine_1/down");
  EXPECT_EQ(up.link_delay_ns, 1'500u);
  EXPECT_EQ(up.role, PortRole::kSwitch);
  EXPECT_EQ(up.rate_bps, 100'000'000'000u);
  // Unset keys keep their defaults.
  EXPECT_EQ(up.mtu, 1500u);
  EXPECT_EQ(up.wire_overhead_bytes, 24u);
  EXPECT_FALSE(up.mac.has_value());
  EXPECT_FALSE(up.peer_mac.has_value());
  EXPECT_FALSE(up.peer_ipv4.has_value());
  EXPECT_FALSE(up.ipv4.has_value());
  EXPECT_EQ(up.hop_rtt_ns, 10'000u);

  ASSERT_EQ(leaf.routes.size(), 2u);
  EXPECT_EQ(leaf.routes[0].prefix.addr, 0x0A000000u);
  EXPECT_EQ(leaf.routes[0].prefix.len, 24);
  EXPECT_EQ(leaf.routes[0].ports, std::vector<std::string>{"h0"});
  EXPECT_EQ(leaf.routes[0].line, 38);
  EXPECT_EQ(leaf.routes[1].prefix.addr, 0u);
  EXPECT_EQ(leaf.routes[1].prefix.len, 0);
  EXPECT_EQ(leaf.routes[1].ports, std::vector<std::string>{"up"});

  const SwitchConfig& spine = c.switches[1];
  EXPECT_EQ(spine.name, "spine_1");
  EXPECT_EQ(spine.buffer.size_bytes, 12u << 20);  // defaults
  EXPECT_DOUBLE_EQ(spine.buffer.dt_alpha, 1.0);
  EXPECT_EQ(spine.tm.queues_per_port, 32u);
  EXPECT_EQ(spine.tm.queue_capacity_packets, 4096u);
  EXPECT_EQ(spine.tm.scheduler, SchedulerKind::kDrr);
  EXPECT_EQ(spine.tm.class_mapping, ClassMapping::kSingleFifo);
  EXPECT_EQ(spine.tm.drr_quantum_bytes, 1600u);
  EXPECT_EQ(spine.tm.ecn.mode, EcnMode::kStep);
  EXPECT_EQ(spine.tm.ecn.step_k_bytes, 100'000u);
  ASSERT_EQ(spine.ports.size(), 1u);
  EXPECT_EQ(spine.ports[0].link_peer, "leaf-1/up");
  EXPECT_EQ(spine.ports[0].rate_bps, 100'000'000'000u);
  EXPECT_TRUE(spine.routes.empty());

  ASSERT_EQ(c.workers.size(), 2u);
  EXPECT_EQ(c.workers[0].lcore, 3u);
  EXPECT_EQ(c.workers[0].line, 53);
  ASSERT_EQ(c.workers[0].ports.size(), 1u);
  EXPECT_EQ(c.workers[0].ports[0].sw, "leaf-1");
  EXPECT_EQ(c.workers[0].ports[0].port, "h0");
  EXPECT_EQ(c.workers[1].lcore, 5u);
  ASSERT_EQ(c.workers[1].ports.size(), 2u);
  EXPECT_EQ(c.workers[1].ports[1].sw, "spine_1");
  EXPECT_EQ(c.workers[1].ports[1].port, "down");
}

TEST(ConfigLoader, MinimalConfigTakesDefaults) {
  const ConfigResult r = load_config_string(R"(switches:
  - name: s1
    ports:
      - name: p0
        device: net_null0
        role: host
        rate: 0
)",
                                            kFile);
  ASSERT_TRUE(r.ok()) << r.errors[0].to_string();
  EXPECT_TRUE(r.config.metrics.enabled);
  EXPECT_EQ(r.config.metrics.address, "127.0.0.1:9100");
  EXPECT_EQ(r.config.mbufs, 32768u);
  EXPECT_EQ(r.config.mbuf_size, 2048u);
  EXPECT_TRUE(r.config.workers.empty());
  EXPECT_EQ(r.config.switches[0].tm.ecn.mode, EcnMode::kOff);
  EXPECT_EQ(r.config.switches[0].ports[0].rate_bps, 0u);
}

// shaper_burst: the token bucket of a port's egress shaper (wire bytes);
// unset, 0 (the builder's default). Not for internal links.
TEST(ConfigLoader, ShaperBurst) {
  const ConfigResult r = load_config_string(R"(switches:
  - name: s1
    ports:
      - {name: h0, role: host, rate: 1Gbps, pcap: {tx: a.pcap}, shaper_burst: 3076B}
      - {name: h1, role: host, rate: 1Gbps, pcap: {tx: b.pcap}}
      - {name: up, link: s2/down, role: switch, rate: 1Gbps, shaper_burst: 2KB}
      - {name: h2, role: host, rate: 1Gbps, pcap: {tx: c.pcap}, shaper_burst: 0}
  - name: s2
    ports:
      - {name: down, link: s1/up, role: switch, rate: 1Gbps}
)",
                                            kFile);
  const auto& ports = r.config.switches[0].ports;
  ASSERT_EQ(ports.size(), 4u);
  EXPECT_EQ(ports[0].shaper_burst_bytes, 3076u);
  EXPECT_EQ(ports[1].shaper_burst_bytes, 0u);
  const std::vector<std::string> errors = error_strings(r);
  EXPECT_EQ(errors, (std::vector<std::string>{
                        std::string(kFile) +
                            ":6: switches[0].ports[2].shaper_burst: \"shaper_burst\" does not "
                            "apply to internal links (they pace themselves: fifo)",
                        std::string(kFile) +
                            ":7: switches[0].ports[3].shaper_burst: expected a value at least 1B, "
                            "got \"0\"",
                    }));
}

// cut_through: on by default; a device port may turn it off; a link or
// capture-file port never cuts through, so the key is refused there.
TEST(ConfigLoader, CutThrough) {
  const ConfigResult r = load_config_string(R"(switches:
  - name: s1
    ports:
      - {name: d0, device: net_null0, role: host, rate: 0}
      - {name: d1, device: net_null1, role: host, rate: 0, cut_through: false}
      - {name: up, link: s2/down, role: switch, rate: 1Gbps, cut_through: true}
      - {name: h0, role: host, rate: 1Gbps, pcap: {tx: a.pcap}, cut_through: false}
      - {name: d2, device: net_null2, role: host, rate: 0, cut_through: 1s}
  - name: s2
    ports:
      - {name: down, link: s1/up, role: switch, rate: 1Gbps}
)",
                                            kFile);
  const auto& ports = r.config.switches[0].ports;
  ASSERT_EQ(ports.size(), 5u);
  EXPECT_TRUE(ports[0].cut_through);
  EXPECT_FALSE(ports[1].cut_through);
  const std::vector<std::string> errors = error_strings(r);
  const std::string only = "\"cut_through\" applies only to device ports (device:)";
  EXPECT_EQ(errors, (std::vector<std::string>{
                        std::string(kFile) + ":6: switches[0].ports[2].cut_through: " + only,
                        std::string(kFile) + ":7: switches[0].ports[3].cut_through: " + only,
                        std::string(kFile) +
                            ":8: switches[0].ports[4].cut_through: expected true or false, got "
                            "\"1s\"",
                    }));
}

TEST(ConfigLoader, PcapPortsAndLinkLoss) {
  const ConfigResult r = load_config_string(R"(switches:
  - name: s1
    ports:
      - name: h0
        role: host
        rate: 10Gbps
        pcap:
          rx: runs/x/h0.pcap
          tx: runs/x/rx_h0.pcap
          mode: paced
          loop: true
          speed: 2.5
      - name: h1
        role: host
        rate: 10Gbps
        pcap:
          rx: in.pcap
          mode: fast
      - name: h2
        role: host
        rate: 10Gbps
        pcap:
          tx: out.pcap
      - name: up
        link: s2/down
        loss: 0.001
        role: switch
        rate: 10Gbps
  - name: s2
    ports:
      - name: down
        link: s1/up
        loss: 0
        role: switch
        rate: 10Gbps
)",
                                            kFile);
  for (const ConfigError& e : r.errors) ADD_FAILURE() << e.to_string();
  ASSERT_TRUE(r.ok());
  const auto& ports = r.config.switches[0].ports;
  ASSERT_EQ(ports.size(), 4u);
  ASSERT_TRUE(ports[0].pcap.has_value());
  EXPECT_EQ(ports[0].device, "");
  EXPECT_EQ(ports[0].link_peer, "");
  EXPECT_EQ(ports[0].pcap->rx_path, "runs/x/h0.pcap");
  EXPECT_EQ(ports[0].pcap->tx_path, "runs/x/rx_h0.pcap");
  EXPECT_EQ(ports[0].pcap->mode, PcapReplayMode::kPaced);
  EXPECT_TRUE(ports[0].pcap->loop);
  EXPECT_DOUBLE_EQ(ports[0].pcap->speed, 2.5);
  ASSERT_TRUE(ports[1].pcap.has_value());
  EXPECT_EQ(ports[1].pcap->rx_path, "in.pcap");
  EXPECT_EQ(ports[1].pcap->tx_path, "");
  EXPECT_EQ(ports[1].pcap->mode, PcapReplayMode::kFast);
  EXPECT_FALSE(ports[1].pcap->loop);
  ASSERT_TRUE(ports[2].pcap.has_value());
  EXPECT_EQ(ports[2].pcap->rx_path, "");
  EXPECT_EQ(ports[2].pcap->tx_path, "out.pcap");
  EXPECT_EQ(ports[2].pcap->mode, PcapReplayMode::kPaced);  // defaults
  EXPECT_FALSE(ports[2].pcap->loop);
  EXPECT_DOUBLE_EQ(ports[2].pcap->speed, 1.0);
  EXPECT_FALSE(ports[3].pcap.has_value());
  EXPECT_DOUBLE_EQ(ports[3].link_loss, 0.001);
  EXPECT_DOUBLE_EQ(r.config.switches[1].ports[0].link_loss, 0.0);
}

TEST(ConfigLoader, LinkLossBounds) {
  const char* kTemplate = R"(switches:
  - name: a
    ports:
      - name: x
        link: b/y
        loss: %s
        role: switch
        rate: 1Gbps
  - name: b
    ports:
      - name: y
        link: a/x
        role: switch
        rate: 1Gbps
)";
  for (const char* loss : {"0", "1", "0.25", "1e-6"}) {
    char yaml[512];
    std::snprintf(yaml, sizeof yaml, kTemplate, loss);
    const ConfigResult r = load_config_string(yaml, kFile);
    ASSERT_TRUE(r.ok()) << loss << ": " << r.errors[0].to_string();
    EXPECT_DOUBLE_EQ(r.config.switches[0].ports[0].link_loss, std::strtod(loss, nullptr));
  }
  for (const char* loss : {"1.0001", "-1e-9", "nan", "inf", ""}) {
    char yaml[512];
    std::snprintf(yaml, sizeof yaml, kTemplate, loss);
    EXPECT_FALSE(load_config_string(yaml, kFile).ok()) << loss;
  }
}

TEST(ConfigError, ToStringFormat) {
  EXPECT_EQ((ConfigError{"a.yaml", 12, "switches[0].name", "bad"}).to_string(),
            "a.yaml:12: switches[0].name: bad");
  EXPECT_EQ((ConfigError{"a.yaml", 3, "", "YAML syntax error: x"}).to_string(),
            "a.yaml:3: YAML syntax error: x");
  EXPECT_EQ((ConfigError{"a.yaml", 0, "", "cannot open"}).to_string(), "a.yaml: cannot open");
}

TEST(ConfigLoader, MissingFile) {
  const ConfigResult r = load_config_file("/nonexistent/sluice.yaml");
  ASSERT_EQ(r.errors.size(), 1u);
  EXPECT_EQ(r.errors[0].to_string(), "/nonexistent/sluice.yaml: cannot open the file for reading");
}

// mbuf_size: the data room of the pool's mbufs, a size from DPDK's default
// (2048) up to what 16 bits hold with the headroom.
TEST(ConfigLoader, MbufSize) {
  const std::string ports = R"(switches:
  - name: s1
    ports:
      - name: p0
        device: net_null0
        role: host
        rate: 0
)";
  ConfigResult r = load_config_string("mbuf_size: 9KiB\n" + ports, kFile);
  ASSERT_TRUE(r.ok()) << r.errors[0].to_string();
  EXPECT_EQ(r.config.mbuf_size, 9216u);
  r = load_config_string("mbuf_size: 65407\n" + ports, kFile);
  ASSERT_TRUE(r.ok()) << r.errors[0].to_string();
  EXPECT_EQ(r.config.mbuf_size, 65407u);
  for (const char* bad : {"mbuf_size: 1500\n", "mbuf_size: 64KiB\n", "mbuf_size: big\n"}) {
    r = load_config_string(bad + ports, kFile);
    ASSERT_EQ(r.errors.size(), 1u) << bad;
    EXPECT_EQ(r.errors[0].line, 1) << bad;
    EXPECT_EQ(r.errors[0].key, "mbuf_size") << bad;
  }
}

}  // namespace
}  // namespace sluice
