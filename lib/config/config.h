#pragma once
// The configuration model: what one YAML file says about switch instances,
// their ports, routes, traffic managers, workers and metrics. Plain data; the
// loader (config_loader.h) fills and validates it, switch/ consumes it.
// docs/configuration.md documents every key. Each mechanism's section
// (lib/mechanisms/<m>/<m>_config.h) and the emulator's (the host NIC, the
// transport) are declared in their own folders, with their parsers and
// checks, and held here under the members switch/ reads.

#include <array>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "lib/emulator/nic/nic_config.h"
#include "lib/emulator/transport/transport_config.h"
#include "lib/mechanisms/bfc/bfc_config.h"
#include "lib/mechanisms/dibs/dibs_config.h"
#include "lib/mechanisms/floodgate/floodgate_config.h"
#include "lib/mechanisms/flowtune/flowtune_config.h"
#include "lib/mechanisms/pfc/pfc_config.h"
#include "lib/mechanisms/tcd/tcd_config.h"

namespace sluice {

using MacAddr = std::array<uint8_t, 6>;

struct Ipv4Prefix {
  uint32_t addr = 0;  // host byte order
  uint8_t len = 0;
};

enum class PortRole { kHost, kSwitch };
enum class SchedulerKind { kDrr, kStrictPriority };
enum class ClassMapping { kSingleFifo, kDscp };
// How switches hash a flow to an ECMP member (docs/configuration.md,
// "ecmp_hash"): each with its own salt, or one hash for both directions of
// a flow and one salt for every switch, so a reply retraces its request's
// path through a two-tier fabric.
enum class EcmpHashing { kPerSwitch, kSymmetric };
enum class EcnMode { kOff, kStep, kRed };

struct EcnConfig {
  EcnMode mode = EcnMode::kOff;
  uint64_t step_k_bytes = 0;   // mode kStep: mark when queue > K
  uint64_t red_min_bytes = 0;  // mode kRed
  uint64_t red_max_bytes = 0;
  double red_pmax = 0.0;
};

// How a port's data queues are kept (docs/traffic-manager.md, "Queueing by
// flow"): by class (the class map's queues, DRR or strict priority), or by
// flow: SFQ hashes flows over sfq_queues queues, FQ gives each flow its own;
// both serve their queues by DRR and may run CoDel in each.
// pFabric keeps one small priority queue per port, served smallest rank
// (remaining flow bytes, from the hosts' header) first.
enum class QueueingKind : uint8_t { kClass, kSfq, kFairQueue, kPfabric };

// SFQ's most queues per port, and CoDel's longest target or interval (1 s).
constexpr uint32_t kMaxSfqQueues = 65536;
constexpr uint64_t kMaxCodelNs = 1'000'000'000;
// pFabric's port buffer at most (its queue is scanned linearly per packet).
constexpr uint64_t kMaxPfabricBufferBytes = 4 << 20;

struct FlowQueueingConfig {
  QueueingKind kind = QueueingKind::kClass;
  uint32_t sfq_queues = 32;       // SFQ: queues the flows hash over
  uint32_t quantum_bytes = 1600;  // DRR quantum among the flow queues
  bool unlimited_buffer = false;  // admission ignores the shared buffer (Ideal-FQ)
  bool codel = false;             // CoDel in each queue (RFC 8289)
  uint64_t codel_target_ns = 5'000'000;
  uint64_t codel_interval_ns = 100'000'000;
  bool codel_ecn = false;                  // mark ECN-capable packets instead of dropping them
  uint64_t pfabric_buffer_bytes = 36'000;  // pFabric: the port's own small buffer (24 x 1500 B)
};

struct BufferConfig {
  uint64_t size_bytes = 12ull << 20;  // shared buffer of the switch
  double dt_alpha = 1.0;              // dynamic threshold: q <= alpha * free
};

enum class PcapReplayMode { kPaced, kFast };

// A port that is a capture file instead of a device: what it receives comes
// from rx_path (paced by the capture's timestamps, or as fast as possible),
// what it transmits is written to tx_path. Either path may be empty.
struct PcapPortConfig {
  std::string rx_path;
  std::string tx_path;
  PcapReplayMode mode = PcapReplayMode::kPaced;
  bool loop = false;         // start again at the end of the file
  double speed = 1.0;        // paced mode: capture time is divided by this
  uint32_t snaplen = 65535;  // tx: bytes of each frame written (the record keeps its length)
  int rx_line = 0;           // where rx was written (for messages)
};

struct PortConfig {
  std::string name;       // unique within its switch
  std::string device;     // DPDK device: "net_null0", "0000:01:00.0", "net_pcap0,rx_pcap=x"
  std::string link_peer;  // internal link: "switch/port" (device is empty then)
  uint64_t link_delay_ns =
      0;                   // one-way propagation delay: internal link, or host link (exact time)
  double link_loss = 0.0;  // internal link: probability a frame is lost (fault tests)
  uint64_t link_fifo_ns = 10'000;      // internal link: transmit time queued past the scheduler
  std::optional<PcapPortConfig> pcap;  // capture-file port (device and link empty then)
  PortRole role = PortRole::kHost;
  uint64_t rate_bps = 0;              // 0: unshaped (line rate of the device)
  uint32_t mtu = 1500;                // largest IP packet forwarded out of this port
  uint32_t wire_overhead_bytes = 24;  // preamble + IFG + FCS charged per frame by the shaper
  uint64_t shaper_burst_bytes = 0;    // token bucket, wire bytes; 0: max(64 KiB, 200 us of rate)
  bool cut_through = true;            // real time: may pass an idle port (StagePlan::cuts_through)
  std::optional<MacAddr> mac;         // default: device MAC
  std::optional<MacAddr> peer_mac;    // default: learned from ARP
  std::optional<uint32_t> peer_ipv4;  // asked for by ARP when peer_mac is unknown
  std::optional<Ipv4Prefix> ipv4;     // the port's own address and connected subnet
  uint64_t hop_rtt_ns = 10'000;       // one-hop RTT to the peer
  PortPfcConfig pfc;                  // takes part in the switch's PFC/PAUSE unless off
  NicConfig nic;                      // capture-file ports: the emulated host NIC
  std::optional<FlowQueueingConfig> queueing;  // default: the switch's
  std::optional<EcnConfig> ecn;                // default: the switch's (tm.ecn)
  int line = 0;                                // where it was declared (for messages)
};

struct RouteConfig {
  Ipv4Prefix prefix;
  std::vector<std::string> ports;  // one port, or several for ECMP
  int line = 0;
};

struct TrafficManagerConfig {
  uint32_t queues_per_port = 32;
  uint32_t queue_capacity_packets = 4096;  // descriptor ring per data queue
  SchedulerKind scheduler = SchedulerKind::kDrr;
  ClassMapping class_mapping = ClassMapping::kSingleFifo;
  uint32_t drr_quantum_bytes = 1600;
  EcnConfig ecn;
  FlowQueueingConfig queueing;  // every port's, unless the port gives its own
  // The transport's replies (ACK, NACK, CNP) in a queue of their own after
  // the data queues (queue queues_per_port), served before them, outside
  // the class map, BFC's assignment and PFC's classes (HPCC's ns-3 with
  // ACK_HIGH_PRIO 1). Off: replies are data like any other.
  bool reply_queue = false;
};

// The queueing a port uses: its own, else its switch's.
inline const FlowQueueingConfig& port_queueing(const TrafficManagerConfig& tm,
                                               const PortConfig& p) {
  return p.queueing ? *p.queueing : tm.queueing;
}

struct SwitchConfig {
  std::string name;
  std::vector<PortConfig> ports;
  std::vector<RouteConfig> routes;
  BufferConfig buffer;
  TrafficManagerConfig tm;
  PfcConfig pfc;
  BfcConfig bfc;
  FloodgateConfig floodgate;
  TcdConfig tcd;
  DibsConfig dibs;
  FlowtuneConfig flowtune;
  // HPCC's in-band telemetry: every egress port stamps its record into
  // transport data frames that ask for it (lib/mechanisms/int/int_stamp.h).
  bool int_telemetry = false;
  int line = 0;
};

// A reference to a port as "switch/port".
struct PortRef {
  std::string sw;
  std::string port;
};

struct WorkerConfig {
  unsigned lcore = 0;
  std::vector<PortRef> ports;    // owned: received on rx queue 0, and their egress
  std::vector<PortRef> receive;  // device ports of other workers: an rx queue of each
  int line = 0;
};

struct MetricsConfig {
  bool enabled = true;
  std::string address = "127.0.0.1:9100";
};

enum class ClockMode { kReal, kExact };

// The data path's clock (docs/emulator.md, "Fabric time"): the
// machine's (real), or the fabric's own, which jumps from one due instant
// to the next and never reads the machine's (exact).
struct ClockConfig {
  ClockMode mode = ClockMode::kReal;
  int line = 0;
};

// DPDK's default mbuf data room (RTE_MBUF_DEFAULT_DATAROOM), and the most a
// mbuf can hold: its data room and 128 bytes of headroom in 16 bits.
constexpr uint32_t kDefaultMbufSize = 2048;
constexpr uint32_t kMaxMbufSize = 65535 - 128;

struct Config {
  std::string file;
  ClockConfig clock;
  std::vector<SwitchConfig> switches;
  FlowtuneAllocatorConfig flowtune_allocator;
  TransportConfig transport;          // emulated transport hosts (kind kNone: none)
  std::vector<WorkerConfig> workers;  // empty: ports spread over EAL worker lcores
  MetricsConfig metrics;
  uint32_t mbufs = 32768;  // mbuf pool size (per NUMA socket)
  // Bytes of frame one mbuf holds (its data room, headroom not included):
  // the largest frame a device or capture port can receive.
  uint32_t mbuf_size = kDefaultMbufSize;
  // Every random choice of the data path (ECMP salt, BFC's hash, DIBS
  // detours, RED, loss on links) is seeded from this and the element's
  // index, so a run repeats for a given seed (docs/configuration.md).
  uint64_t seed = 1;
  EcmpHashing ecmp_hash = EcmpHashing::kPerSwitch;
};

}  // namespace sluice
