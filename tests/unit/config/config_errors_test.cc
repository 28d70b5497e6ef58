// Each test loads a small file with known mistakes and checks the exact error
// lines ("file:line: key: message"). Line numbers are counted by hand from the
// raw strings: the first line of each string is line 1.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "lib/config/config_loader.h"

namespace sluice {
namespace {

using Lines = std::vector<std::string>;

Lines errors_of(const std::string& yaml) {
  Lines out;
  for (const ConfigError& e : load_config_string(yaml, "t.yaml").errors)
    out.push_back(e.to_string());
  return out;
}

TEST(ConfigErrors, MissingRequiredKey) {
  EXPECT_EQ(errors_of(R"(switches:
  - name: s1
    ports:
      - name: p0
        device: net_null0
        role: host
)"),
            Lines{"t.yaml:4: switches[0].ports[0].rate: missing required key \"rate\""});
  EXPECT_EQ(errors_of("mbufs: 4096\n"),
            Lines{"t.yaml:1: switches: missing required key \"switches\""});
  EXPECT_EQ(errors_of(R"(switches:
  - ports:
      - name: p0
        device: net_null0
        role: host
        rate: 1G
)"),
            Lines{"t.yaml:2: switches[0].name: missing required key \"name\""});
}

TEST(ConfigErrors, WrongType) {
  EXPECT_EQ(errors_of(R"(switches:
  - name: s1
    ports:
      name: p0
)"),
            Lines{"t.yaml:4: switches[0].ports: expected a list, got a map"});
  EXPECT_EQ(errors_of(R"(switches:
  - name: s1
    ports:
      - name: p0
        device: net_null0
        role: host
        rate: 1G
        mtu: big
        peer_ip: [10.0.0.1]
)"),
            (Lines{
                "t.yaml:8: switches[0].ports[0].mtu: expected an integer between 68 and 9216, got "
                "\"big\"",
                "t.yaml:9: switches[0].ports[0].peer_ip: expected a string, got a list",
            }));
  EXPECT_EQ(errors_of("switches: s1\n"), Lines{"t.yaml:1: switches: expected a list, got \"s1\""});
}

TEST(ConfigErrors, EmptyValuesReportTheLineOfTheirKey) {
  EXPECT_EQ(errors_of(R"(switches:
  - name: s1
    ports:
  - name: s2
    ecn:
    ports:
      - name: p0
        device: net_null0
        role:
        rate:
)"),
            (Lines{
                "t.yaml:3: switches[0].ports: expected at least one port",
                "t.yaml:5: switches[1].ecn.mode: missing required key \"mode\"",
                "t.yaml:9: switches[1].ports[0].role: expected one of host, switch, got nothing",
                "t.yaml:10: switches[1].ports[0].rate: expected a rate such as 10Gbps or "
                "100Mbps, got nothing",
            }));
}

TEST(ConfigErrors, UnknownKeyWithSuggestion) {
  EXPECT_EQ(errors_of(R"(switches:
  - name: s1
    ports:
      - name: p0
        device: net_null0
        role: host
        rtae: 10Gbps
)"),
            (Lines{
                "t.yaml:4: switches[0].ports[0].rate: missing required key \"rate\"",
                "t.yaml:7: switches[0].ports[0].rtae: unknown key \"rtae\"; did you mean \"rate\"?",
            }));
}

TEST(ConfigErrors, UnknownKeyListsAllowedKeys) {
  EXPECT_EQ(errors_of(R"(metrics:
  bandwidth: 1
switches:
  - name: s1
    ports:
      - name: p0
        device: net_null0
        role: host
        rate: 0
)"),
            Lines{"t.yaml:2: metrics.bandwidth: unknown key \"bandwidth\"; allowed keys: enabled, "
                  "address"});
}

TEST(ConfigErrors, UnknownPortInRoute) {
  EXPECT_EQ(errors_of(R"(switches:
  - name: s1
    ports:
      - name: p0
        device: net_null0
        role: host
        rate: 0
    routes:
      - prefix: 10.0.0.0/24
        ports: [p0, p7]
      - prefix: 10.0.1.0/24
        port: p9
)"),
            (Lines{
                "t.yaml:10: switches[0].routes[0].ports[1]: unknown port \"p7\" in switch \"s1\"",
                "t.yaml:12: switches[0].routes[1].port: unknown port \"p9\" in switch \"s1\"",
            }));
}

constexpr const char* kTwoPorts = R"(switches:
  - name: s1
    ports:
      - name: p0
        device: net_null0
        role: host
        rate: 0
      - name: p1
        device: net_null1
        role: host
        rate: 0
)";  // 11 lines

TEST(ConfigErrors, OverlappingLcores) {
  EXPECT_EQ(errors_of(std::string(kTwoPorts) + R"(workers:
  - lcore: 1
    ports: [s1/p0]
  - lcore: 2
    ports: [s1/p1, s1/p0]
)"),
            Lines{"t.yaml:16: workers[1].ports[1]: overlapping lcores: port s1/p0 is already "
                  "assigned to workers[0] (lcore 1)"});
}

TEST(ConfigErrors, WorkerLcoreRules) {
  EXPECT_EQ(errors_of(std::string(kTwoPorts) + R"(workers:
  - lcore: 0
    ports: [s1/p0]
  - lcore: 3
    ports: [s1/p1]
  - lcore: 3
    ports: [s2/p1]
)"),
            (Lines{
                "t.yaml:13: workers[0].lcore: lcore 0 is the main lcore (it runs the control "
                "loop); workers need other lcores",
                "t.yaml:17: workers[2].lcore: lcore 3 is listed twice (also workers[1])",
                "t.yaml:18: workers[2].ports[0]: unknown port \"s2/p1\"",
            }));
}

TEST(ConfigErrors, PortWithoutWorker) {
  EXPECT_EQ(errors_of(std::string(kTwoPorts) + R"(workers:
  - lcore: 1
    ports: [s1/p0, s1]
)"),
            (Lines{
                "t.yaml:8: switches[0].ports[1].name: port s1/p1 is assigned to no worker (when "
                "workers are given, every port needs one)",
                "t.yaml:14: workers[0].ports[1]: expected switch/port such as s1/p0, got \"s1\"",
            }));
}

TEST(ConfigErrors, ReceiveRules) {
  EXPECT_EQ(errors_of(std::string(kTwoPorts) + R"(workers:
  - lcore: 1
    ports: [s1/p0, s1/p1]
    receive: [s1/p0]
  - lcore: 2
    receive: [s1/p1, s1/p1, s1/p9]
  - lcore: 3
)"),
            (Lines{
                "t.yaml:15: workers[0].receive[0]: port s1/p0 is this worker's own (its owner "
                "receives rx queue 0); receive lists other workers' ports",
                "t.yaml:17: workers[1].receive[1]: port s1/p1 is listed twice (one rx queue per "
                "worker)",
                "t.yaml:17: workers[1].receive[2]: unknown port \"s1/p9\"",
                "t.yaml:18: workers[2].ports: missing required key \"ports\" (or \"receive\")",
            }));
}

TEST(ConfigErrors, BadUnits) {
  EXPECT_EQ(errors_of(R"(switches:
  - name: s1
    buffer:
      size: 12 megabytes
    drr_quantum: 32B
    ports:
      - name: p0
        device: net_null0
        role: host
        rate: 10 furlongs
        hop_rtt: 10
      - name: p1
        device: net_null1
        role: host
        rate: 10
)"),
            (Lines{
                "t.yaml:4: switches[0].buffer.size: expected a size such as 100KB, 12MiB or "
                "1500B, got \"12 megabytes\"",
                "t.yaml:5: switches[0].drr_quantum: expected a value between 64B and "
                "4294967295B, got \"32B\"",
                "t.yaml:10: switches[0].ports[0].rate: expected a rate such as 10Gbps or "
                "100Mbps, got \"10 furlongs\"",
                "t.yaml:11: switches[0].ports[0].hop_rtt: expected a duration such as 10us, "
                "500ns or 1ms, got \"10\"",
                "t.yaml:15: switches[0].ports[1].rate: expected a rate such as 10Gbps or "
                "100Mbps, got \"10\"",
            }));
}

TEST(ConfigErrors, OutOfRange) {
  EXPECT_EQ(errors_of(R"(mbufs: 100
switches:
  - name: s1
    queues_per_port: 65
    queue_capacity: 8
    buffer:
      alpha: 0
    ports:
      - name: p0
        device: net_null0
        role: host
        rate: 0
        mtu: 67
)"),
            (Lines{
                "t.yaml:1: mbufs: expected an integer between 1024 and 67108864, got \"100\"",
                "t.yaml:4: switches[0].queues_per_port: expected an integer between 1 and 64, "
                "got \"65\"",
                "t.yaml:5: switches[0].queue_capacity: expected an integer between 16 and "
                "1048576, got \"8\"",
                "t.yaml:7: switches[0].buffer.alpha: expected a number above 0, got \"0\"",
                "t.yaml:13: switches[0].ports[0].mtu: expected an integer between 68 and 9216, "
                "got \"67\"",
            }));
}

TEST(ConfigErrors, BadPrefix) {
  EXPECT_EQ(errors_of(R"(switches:
  - name: s1
    ports:
      - name: p0
        device: net_null0
        role: host
        rate: 0
    routes:
      - prefix: 10.0.0.1/24
        port: p0
      - prefix: 10.0.1.0
        port: p0
      - prefix: 10.0.2.0/33
        port: p0
      - prefix: 10.0.3.0/24
        port: p0
      - prefix: 10.0.3.0/24
        port: p0
)"),
            (Lines{
                "t.yaml:9: switches[0].routes[0].prefix: prefix 10.0.0.1/24 has host bits set; "
                "did you mean 10.0.0.0/24?",
                "t.yaml:11: switches[0].routes[1].prefix: expected a prefix such as "
                "10.0.1.0/24, got \"10.0.1.0\"",
                "t.yaml:13: switches[0].routes[2].prefix: expected a prefix such as "
                "10.0.1.0/24, got \"10.0.2.0/33\"",
                "t.yaml:17: switches[0].routes[4].prefix: duplicate route prefix 10.0.3.0/24 "
                "(also switches[0].routes[3])",
            }));
}

TEST(ConfigErrors, LinkMismatch) {
  EXPECT_EQ(errors_of(R"(switches:
  - name: a
    ports:
      - name: x
        link: b/y
        role: switch
        rate: 10Gbps
      - name: h
        link: b/z
        role: host
        rate: 1Gbps
      - name: lost
        link: c/p
        role: switch
        rate: 1Gbps
  - name: b
    ports:
      - name: y
        link: a/x
        role: switch
        rate: 40Gbps
      - name: z
        link: a/h
        role: switch
        rate: 1Gbps
      - name: w
        link: a/x
        role: switch
        rate: 10Gbps
)"),
            (Lines{
                "t.yaml:5: switches[0].ports[0].link: rate mismatch across the link: a/x has "
                "10000000000bps, b/y has 40000000000bps",
                "t.yaml:10: switches[0].ports[1].role: an internal link joins two switches: "
                "expected role switch at a/h",
                "t.yaml:13: switches[0].ports[2].link: link peer \"c/p\" does not exist (no "
                "switch \"c\")",
                "t.yaml:27: switches[1].ports[2].link: link peer \"a/x\" does not link back: it "
                "should say link: b/w, but says b/y",
            }));
}

TEST(ConfigErrors, DeviceAndLinkExclusive) {
  EXPECT_EQ(errors_of(R"(switches:
  - name: s1
    ports:
      - name: p0
        role: host
        rate: 0
      - name: p1
        device: net_null1
        link: s1/p0
        role: switch
        rate: 0
      - name: p2
        device: net_null2
        delay: 1us
        role: host
        rate: 0
)"),
            (Lines{
                "t.yaml:4: switches[0].ports[0].device: missing required key \"device\", "
                "\"link\" or \"pcap\"",
                "t.yaml:9: switches[0].ports[1].link: give only one of device, link or pcap",
                "t.yaml:9: switches[0].ports[1].link: link peer \"s1/p0\" does not link back: it "
                "should say link: s1/p1",
                "t.yaml:14: switches[0].ports[2].delay: \"delay\" applies only to internal links "
                "(link:) and capture-file hosts (pcap:)",
            }));
}

TEST(ConfigErrors, PcapCombinedWithDeviceOrLink) {
  EXPECT_EQ(errors_of(R"(switches:
  - name: s1
    ports:
      - name: p0
        device: net_null0
        pcap:
          rx: a.pcap
        role: host
        rate: 0
      - name: p1
        link: s1/p0
        pcap:
          tx: b.pcap
        role: host
        rate: 0
)"),
            (Lines{
                "t.yaml:6: switches[0].ports[0].pcap: give only one of device, link or pcap",
                "t.yaml:11: switches[0].ports[1].link: link peer \"s1/p0\" does not link back: "
                "it should say link: s1/p1",
                "t.yaml:12: switches[0].ports[1].pcap: give only one of device, link or pcap",
            }));
}

TEST(ConfigErrors, PcapNeedsRxOrTx) {
  EXPECT_EQ(errors_of(R"(switches:
  - name: s1
    ports:
      - name: p0
        pcap:
          mode: fast
        role: host
        rate: 0
      - name: p1
        pcap:
        role: host
        rate: 0
      - name: p2
        pcap:
          rx: ""
        role: host
        rate: 0
)"),
            (Lines{
                "t.yaml:5: switches[0].ports[0].pcap: expected rx (a capture to replay), tx (a "
                "capture to write) or both (or, with a transport section, a host port that runs "
                "it)",
                "t.yaml:10: switches[0].ports[1].pcap: expected rx (a capture to replay), tx (a "
                "capture to write) or both (or, with a transport section, a host port that runs "
                "it)",
                "t.yaml:15: switches[0].ports[2].pcap.rx: expected a file path, got \"\"",
            }));
}

TEST(ConfigErrors, PcapKeysAndTypes) {
  EXPECT_EQ(errors_of(R"(switches:
  - name: s1
    ports:
      - name: p0
        pcap:
          rx: [a.pcap]
          tx: {file: b.pcap}
          mdoe: fast
          file: c.pcap
        role: host
        rate: 0
      - name: p1
        pcap: h1.pcap
        role: host
        rate: 0
)"),
            (Lines{
                "t.yaml:6: switches[0].ports[0].pcap.rx: expected a string, got a list",
                "t.yaml:7: switches[0].ports[0].pcap.tx: expected a string, got a map",
                "t.yaml:8: switches[0].ports[0].pcap.mdoe: unknown key \"mdoe\"; did you mean "
                "\"mode\"?",
                "t.yaml:9: switches[0].ports[0].pcap.file: unknown key \"file\"; allowed keys: rx, "
                "tx, mode, loop, speed, snaplen",
                "t.yaml:13: switches[0].ports[1].pcap: expected a map, got \"h1.pcap\"",
            }));
}

TEST(ConfigErrors, PcapModeLoopSpeed) {
  EXPECT_EQ(errors_of(R"(switches:
  - name: s1
    ports:
      - name: p0
        role: host
        rate: 0
        pcap:
          rx: a.pcap
          mode: realtime
          loop: sometimes
          speed: 0
      - name: p1
        role: host
        rate: 0
        pcap:
          rx: b.pcap
          speed: -2
      - name: p2
        role: host
        rate: 0
        pcap:
          rx: c.pcap
          mode: fast
          speed: 2
      - name: p3
        role: host
        rate: 0
        pcap:
          tx: d.pcap
          mode: fast
          loop: true
)"),
            (Lines{
                "t.yaml:9: switches[0].ports[0].pcap.mode: expected one of paced, fast, got "
                "\"realtime\"",
                "t.yaml:10: switches[0].ports[0].pcap.loop: expected true or false, got "
                "\"sometimes\"",
                "t.yaml:11: switches[0].ports[0].pcap.speed: expected a number above 0, "
                "got \"0\"",
                "t.yaml:17: switches[0].ports[1].pcap.speed: expected a number above 0, "
                "got \"-2\"",
                "t.yaml:24: switches[0].ports[2].pcap.speed: \"speed\" applies only to mode paced",
                "t.yaml:30: switches[0].ports[3].pcap.mode: this key applies only to a replayed "
                "capture (rx)",
                "t.yaml:31: switches[0].ports[3].pcap.loop: this key applies only to a replayed "
                "capture (rx)",
            }));
}

TEST(ConfigErrors, CaptureFileConflicts) {
  EXPECT_EQ(errors_of(R"(switches:
  - name: s1
    ports:
      - name: p0
        pcap:
          rx: same.pcap
          tx: same.pcap
        role: host
        rate: 0
      - name: p1
        pcap:
          tx: out.pcap
        role: host
        rate: 0
  - name: s2
    ports:
      - name: p0
        pcap:
          rx: out.pcap
          tx: out.pcap
        role: host
        rate: 0
)"),
            (Lines{
                "t.yaml:6: switches[0].ports[0].pcap.rx: \"same.pcap\" is also written by "
                "switches[0].ports[0].pcap.tx, which would truncate it before it is replayed",
                "t.yaml:19: switches[1].ports[0].pcap.rx: \"out.pcap\" is also written by "
                "switches[0].ports[1].pcap.tx, which would truncate it before it is replayed",
                "t.yaml:20: switches[1].ports[0].pcap.tx: \"out.pcap\" is already written by "
                "switches[0].ports[1].pcap.tx",
            }));
}

TEST(ConfigErrors, LinkLoss) {
  EXPECT_EQ(errors_of(R"(switches:
  - name: a
    ports:
      - name: x
        link: b/y
        loss: 1.5
        role: switch
        rate: 1Gbps
      - name: h
        device: net_null0
        loss: 0.1
        role: host
        rate: 1Gbps
  - name: b
    ports:
      - name: y
        link: a/x
        loss: -0.1
        role: switch
        rate: 1Gbps
      - name: h
        pcap:
          rx: h.pcap
        loss: 0
        role: host
        rate: 1Gbps
      - name: z
        link: c/z
        loss: lots
        role: switch
        rate: 1Gbps
  - name: c
    ports:
      - name: z
        link: b/z
        loss: 0.5%
        role: switch
        rate: 1Gbps
)"),
            (Lines{
                "t.yaml:6: switches[0].ports[0].loss: expected a probability between 0 and 1, "
                "got \"1.5\"",
                "t.yaml:11: switches[0].ports[1].loss: \"loss\" applies only to internal links "
                "(link:)",
                "t.yaml:18: switches[1].ports[0].loss: expected a probability between 0 and 1, "
                "got \"-0.1\"",
                "t.yaml:24: switches[1].ports[1].loss: \"loss\" applies only to internal links "
                "(link:)",
                "t.yaml:29: switches[1].ports[2].loss: expected a probability between 0 and 1, "
                "got \"lots\"",
                "t.yaml:36: switches[2].ports[0].loss: expected a probability between 0 and 1, "
                "got \"0.5%\"",
            }));
}

TEST(ConfigErrors, DuplicateNames) {
  EXPECT_EQ(errors_of(R"(switches:
  - name: s1
    ports:
      - name: p0
        device: net_null0
        role: host
        rate: 0
      - name: p0
        device: net_null1
        role: host
        rate: 0
  - name: s1
    ports:
      - name: Bad/Name
        device: net_null2
        role: host
        rate: 0
)"),
            (Lines{
                "t.yaml:8: switches[0].ports[1].name: duplicate port name \"p0\" in switch \"s1\"",
                "t.yaml:12: switches[1].name: duplicate switch name \"s1\"",
                "t.yaml:14: switches[1].ports[0].name: expected a name of lower-case letters, "
                "digits, '_' and '-', got \"Bad/Name\"",
            }));
}

TEST(ConfigErrors, DuplicateKey) {
  EXPECT_EQ(errors_of(R"(switches:
  - name: s1
    name: s2
    ports:
      - name: p0
        device: net_null0
        role: host
        rate: 0
)"),
            Lines{"t.yaml:3: switches[0].name: key \"name\" is given twice"});
}

TEST(ConfigErrors, BadAddresses) {
  EXPECT_EQ(errors_of(R"(metrics:
  address: localhost
switches:
  - name: s1
    ports:
      - name: p0
        device: net_null0
        role: host
        rate: 0
        mac: 02:00:00:00:00
        peer_mac: 01:00:5e:00:00:01
        peer_ip: 10.0.0.256
        ipv4: 10.0.0.1
)"),
            (Lines{
                "t.yaml:2: metrics.address: expected host:port such as 127.0.0.1:9100, got "
                "\"localhost\"",
                "t.yaml:10: switches[0].ports[0].mac: expected a MAC address such as "
                "02:00:00:00:00:01, got \"02:00:00:00:00\"",
                "t.yaml:11: switches[0].ports[0].peer_mac: expected a unicast MAC address, got "
                "\"01:00:5e:00:00:01\"",
                "t.yaml:12: switches[0].ports[0].peer_ip: expected an IPv4 address such as "
                "10.0.0.2, got \"10.0.0.256\"",
                "t.yaml:13: switches[0].ports[0].ipv4: expected an address with prefix length "
                "such as 10.0.0.1/24, got \"10.0.0.1\"",
            }));
}

TEST(ConfigErrors, EcnParameters) {
  EXPECT_EQ(errors_of(R"(switches:
  - name: s1
    ecn:
      mode: red
      min: 200KB
      max: 200KB
      pmax: 1.5
      k: 10KB
    ports:
      - name: p0
        device: net_null0
        role: host
        rate: 0
  - name: s2
    ecn:
      mode: step
    ports:
      - name: p0
        device: net_null0
        role: host
        rate: 0
)"),
            (Lines{
                "t.yaml:6: switches[0].ecn.max: expected max greater than min (200000B), got "
                "\"200KB\"",
                "t.yaml:7: switches[0].ecn.pmax: expected a number above 0 and at most 1, got "
                "\"1.5\"",
                "t.yaml:8: switches[0].ecn.k: \"k\" applies only to mode step",
                "t.yaml:16: switches[1].ecn.k: missing required key \"k\"",
            }));
}

TEST(ConfigErrors, YamlSyntaxError) {
  EXPECT_EQ(errors_of("switches:\n  - name: s1\n    ports: [p0\n"),
            Lines{"t.yaml:4: YAML syntax error: end of sequence flow not found"});
  EXPECT_EQ(errors_of("switches:\n  - name: s1\n   bad: indentation\n"),
            Lines{"t.yaml:3: YAML syntax error: end of sequence not found"});
}

TEST(ConfigErrors, ReportsEveryErrorInFileOrder) {
  const ConfigResult r = load_config_string(R"(mbufs: -1
switches:
  - name: s1
    scheduler: wfq
    ports:
      - name: p0
        device: net_null0
        role: hots
        rate: 1 Gbps
        mtu: 1e4
)",
                                            "t.yaml");
  ASSERT_EQ(r.errors.size(), 4u);
  EXPECT_EQ(r.errors[0].line, 1);
  EXPECT_EQ(r.errors[0].key, "mbufs");
  EXPECT_EQ(r.errors[1].to_string(),
            "t.yaml:4: switches[0].scheduler: expected one of drr, strict, got \"wfq\"");
  EXPECT_EQ(r.errors[2].to_string(),
            "t.yaml:8: switches[0].ports[0].role: expected one of host, switch, got \"hots\"");
  EXPECT_EQ(r.errors[3].line, 10);
  EXPECT_EQ(r.errors[3].key, "switches[0].ports[0].mtu");
  EXPECT_EQ(r.config.switches[0].ports[0].rate_bps, 1'000'000'000u);  // the good keys are kept
}

// The replies' queue follows the data queues (at most 64 in all) and needs
// class queues.
TEST(ConfigErrors, ReplyQueue) {
  const std::string ok = R"(switches:
  - name: s1
    queues_per_port: 63
    reply_queue: true
    ports:
      - {name: p0, device: net_null0, role: host, rate: 1G}
)";
  const ConfigResult r = load_config_string(ok, "t.yaml");
  EXPECT_TRUE(r.ok());
  EXPECT_TRUE(r.config.switches[0].tm.reply_queue);
  EXPECT_EQ(errors_of(R"(switches:
  - name: s1
    queues_per_port: 64
    reply_queue: true
    queueing: {mode: fq}
    ports:
      - {name: p0, device: net_null0, role: host, rate: 1G}
)"),
            (Lines{"t.yaml:4: switches[0].reply_queue: reply_queue adds a queue after the data "
                   "queues: expected queues_per_port of 63 or fewer, got 64",
                   "t.yaml:4: switches[0].reply_queue: reply_queue needs class queues: a port "
                   "here queues by flow (queueing)"}));
}

}  // namespace
}  // namespace sluice
