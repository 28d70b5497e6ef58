#pragma once
// The running process: switch instances, their ports (numbered globally), the
// worker lcores that own them and the rings between those lcores. Built once
// from the configuration before the workers start; afterwards each piece of
// mutable state has exactly one writer (the owning lcore).

#include <rte_lpm.h>
#include <rte_mbuf.h>
#include <rte_mempool.h>
#include <rte_ring.h>

#include <array>
#include <atomic>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "lib/common/seeds.h"
#include "lib/common/xorshift.h"
#include "lib/config/config.h"
#include "lib/emulator/link/link_ring.h"
#include "lib/emulator/link/link_timing.h"
#include "lib/net/flow_hash.h"
#include "lib/net/prefix_table.h"
#include "lib/tm/egress_port.h"
#include "lib/tm/latency_histogram.h"
#include "lib/tm/shared_buffer.h"
#include "switch/emulator/window_sync.h"
#include "switch/path/module.h"
#include "switch/path/port_counters.h"
#include "switch/path/stage_plan.h"
#include "switch/ports/pcap_port.h"
#include "switch/ports/port_medium.h"
#include "switch/runtime/mbuf_supply.h"

namespace sluice {

// Exact time: elements handled this often at one instant without time
// moving on are a rule that asks to run at once and does nothing; the run
// stops and says so rather than spin forever.
inline constexpr uint64_t kMaxEventsPerInstant = 50'000'000;

constexpr uint16_t kNoEthPort = 0xFFFF;
constexpr unsigned kMaxEcmp = 16;
constexpr unsigned kBurst = 32;
constexpr uint32_t kLocalNextHop = (1u << 24) - 1;  // LPM next hop: the switch's own address
// SwitchRuntime::default_group when no route covers 0.0.0.0/0.
constexpr uint32_t kNoDefaultRoute = UINT32_MAX;

struct NextHopGroup16 {
  uint16_t size = 0;
  uint16_t ports[kMaxEcmp] = {};  // global port indices
};

// The port of a group a flow takes: the high half of its salted flow hash
// picks the member (the low half is left to a module's queue choice).
inline uint16_t ecmp_member(const NextHopGroup16& g, uint64_t salted) {
  return g.size > 1 ? g.ports[ecmp_pick(static_cast<uint32_t>(salted >> 32), g.size)] : g.ports[0];
}

enum class PortKind : uint8_t { kEthdev, kLink, kPcap };

constexpr uint8_t kNoReplyQueue = 0xFF;

// One direction of an internal link: frames pushed by the sending port's owner
// with their due time, taken by the receiving port's owner once due. Both
// read the first cache line (the ring; the sender also the wire's timing)
// and the frame's slot; a lossy link's sender also reads the second for its
// draw, and real time's sender the FIFO bound.
struct alignas(64) LinkDirection {
  LinkDirection(uint32_t slots, uint64_t rate_bps, uint32_t overhead, uint64_t delay_ns,
                double loss, uint64_t seed)
      : ring(slots),
        lossy(probability32(loss) != 0),
        timing(rate_bps, overhead, delay_ns),
        loss_p32(probability32(loss)),
        rng(seed) {}
  // Line 0.
  LinkRing ring;
  uint16_t rx_port = 0;  // global index of the receiving port
  bool lossy;            // loss_p32 != 0
  LinkTiming timing;     // sender-owned
  // Line 1.
  uint64_t loss_p32;     // loss probability as a 32-bit threshold
  Xorshift64 rng;        // sender-owned
  uint64_t fifo_ns = 0;  // most serialisation time the sender commits ahead (0: no limit)
};
static_assert(sizeof(LinkRing) + 8 + sizeof(LinkTiming) <= 64,
              "a link direction's ring and timing share its first line");

// A port's state. What every packet through it reads or writes sits in
// its first three cache lines and the first of tx_pending, which the
// emulator's loop prefetches (switch/emulator/port_element.cc); the rest
// is read per event or less often.
struct alignas(64) PortRuntime {
  // Line 0.
  PortKind kind = PortKind::kEthdev;
  bool eth_header_ready = false;
  // Modules whose forward step runs for packets arriving here (bit per id).
  uint8_t in_steps = 0;
  // A 0x88B6 shim arriving here names the peer's upstream queue, which the
  // metadata keeps (a BFC peer: a switch, or a BFC NIC).
  bool reads_upstream_queue = false;
  uint16_t index = 0;          // global index
  uint16_t switch_index = 0;   // owning switch instance
  uint32_t mtu = 1500;         // copy of cfg->mtu, read per packet
  unsigned owner_slot = 0;     // index into Runtime::workers
  StagePlan plan;              // the optional steps packets leaving here take
  bool tx_burst_full = false;  // the last transmit sent a whole dequeued burst
  // Of tx_pending, how many admission cut through since the last send
  // (real time; all of them when not 0).
  uint8_t tx_cut = 0;
  // The queue the transport's replies take (tm reply_queue), else
  // kNoReplyQueue: the metadata's queue says a packet is one.
  uint8_t reply_queue = kNoReplyQueue;
  unsigned tx_pending_count = 0;
  std::unique_ptr<EgressPort> tm;
  // What the port sends into and receives from (switch/ports/
  // port_medium.h): a NIC, one end of an internal link, an emulated host.
  std::unique_ptr<PortMedium> medium;
  // Internal links: the direction this port sends into (kind kLink),
  // whose wire paces what leaves instead of the traffic manager's shaper.
  LinkDirection* link_out = nullptr;
  // An emulated host's capture-file port, owned by the medium (kind kPcap),
  // for what only it has: its replay, captures, NIC and transports.
  PcapPort* pcap = nullptr;
  // Line 1. The Ethernet header every routed packet leaves with (peer MAC,
  // port MAC, IPv4), rebuilt by the owner lcore whenever the peer MAC is
  // learned.
  uint8_t eth_header[14] = {};
  uint16_t eth_port = kNoEthPort;  // DPDK port id
  std::atomic<uint64_t> first_tx_ns{0};
  std::atomic<uint64_t> last_tx_ns{0};
  const PortConfig* cfg = nullptr;
  uint64_t next_arp_request_ns = 0;
  rte_mempool* rx_pool = nullptr;  // device ports: the pool on the device's NUMA socket
  // Line 2. Modules (switch/path/module.h): each one's state for this port,
  // where it has any (nullptr elsewhere), at the module's id.
  alignas(64) std::array<void*, kMaxModules> module{};
  // Owner-lcore state: what the last transmit dequeued and the port has
  // not taken yet.
  rte_mbuf* tx_pending[kBurst] = {};
  MacAddr mac{};
  // Peer MAC packed in the low 48 bits, bit 48 set when known. Written only by
  // the owner lcore (ARP learning); read by telemetry.
  std::atomic<uint64_t> peer_mac{0};
  // Emulation fidelity: how late frames left the shaper, and how late
  // internal-link deliveries were, against their due times (the link
  // medium's histogram, in the line each receive touches; nullptr on other
  // ports).
  LatencyHistogram shaper_lateness;
  const LatencyHistogram* link_lateness = nullptr;
};

// Line-aligned: forward reads its first line for every packet (the route,
// the hash, the queue choice), and nothing else of it.
struct alignas(64) SwitchRuntime {
  // Its routes: rte_lpm in real time (one memory access per lookup, 64 MiB
  // a switch), a PrefixTable in the emulator's fabric time (a few KiB).
  rte_lpm* lpm = nullptr;
  std::unique_ptr<PrefixTable> routes;
  std::vector<NextHopGroup16> groups;
  uint64_t ecmp_salt = 0;  // salted_flow_hash's, from the configuration's seed
  // The group of the route 0.0.0.0/0, taken when the LPM finds nothing
  // (rte_lpm has no depth 0); kNoDefaultRoute: no such route.
  uint32_t default_group = kNoDefaultRoute;
  uint16_t index = 0;
  // cfg->tm's queue choice, copied here: queues_per_port (the reply queue's
  // index), by DSCP or one FIFO, and whether replies take their own queue.
  uint16_t queues_per_port = 0;
  bool dscp_classes = false;
  bool reply_queue = false;
  bool symmetric_hash = false;  // ecmp_hash: symmetric (one salt for every switch)
  bool flow_hash = false;       // forward computes the 5-tuple hash even without ECMP
  bool ingress_meta = false;    // forward keeps the ingress port (and hash) with the packet
  const SwitchConfig* cfg = nullptr;
  std::vector<uint16_t> ports;  // global indices, in configuration order
  // Per lcore slot: its shard of this switch, its rank among the lcores
  // that own the switch's ports (0 on the only one). Frames carry it, and
  // per-shard random choices are seeded by it, so that the same switch
  // makes the same choices and frames whichever lcore runs it.
  std::vector<uint8_t> shard_of_slot;
  std::array<void*, kMaxModules> module{};  // each module's state for this switch
};

static_assert(PrefixTable::kNoRoute == kNoDefaultRoute);

// The 5-tuple hash switch `sw` routes a flow by before its salt
// (docs/packet-processing.md, "Flow hash"), host byte order. ecmp_hash is
// one setting for every switch, so a walk over several switches can take it
// once and salt it at each.
inline uint32_t unsalted_flow_hash(const SwitchRuntime& sw, uint32_t src_ip, uint32_t dst_ip,
                                   uint8_t proto, uint16_t src_port, uint16_t dst_port) {
  return sw.symmetric_hash ? symmetric_flow_hash(src_ip, dst_ip, proto, src_port, dst_port)
                           : flow_hash(src_ip, dst_ip, proto, src_port, dst_port);
}

// The 64-bit salted hash switch `sw` routes a flow by.
inline uint64_t switch_flow_hash(const SwitchRuntime& sw, uint32_t src_ip, uint32_t dst_ip,
                                 uint8_t proto, uint16_t src_port, uint16_t dst_port) {
  return salted_flow_hash(unsalted_flow_hash(sw, src_ip, dst_ip, proto, src_port, dst_port),
                          sw.ecmp_salt);
}

// The next-hop group switch `sw` routes dst_ip by: its longest prefix, else
// its default route; kNoDefaultRoute: none; kLocalNextHop: its own address.
inline uint32_t route_next_hop(const SwitchRuntime& sw, uint32_t dst_ip) {
  uint32_t nh;
  if (sw.lpm != nullptr) [[likely]] {
    if (rte_lpm_lookup(sw.lpm, dst_ip, &nh) != 0) nh = kNoDefaultRoute;
  } else {
    nh = sw.routes->lookup(dst_ip);  // the emulator's (PrefixTable::kNoRoute: none)
  }
  return nh == kNoDefaultRoute ? sw.default_group : nh;  // 0.0.0.0/0 lives outside the table
}

// A module's state for the whole process (built on the main lcore before
// the workers start; then each piece has one writer, as everywhere).
struct ModuleState {
  virtual ~ModuleState() = default;
};

// An rx queue other than 0 of a device port, polled by a worker that does
// not own the port (workers[].receive): its frames are routed there, and
// what only the owner may handle crosses the ring to it.
struct RxShare {
  uint16_t port = 0;  // global index
  uint16_t queue = 0;
  std::unique_ptr<PortMedium> medium;
};

struct WorkerRuntime {
  unsigned slot = 0;
  unsigned lcore = 0;
  std::vector<uint16_t> ports;         // owned ports (rx queue 0 and egress)
  std::vector<RxShare> receive;        // rx queues of other workers' ports
  std::vector<rte_ring*> to;           // to[s]: ring to worker s (nullptr for self)
  std::vector<rte_ring*> from;         // from[s]: ring from worker s
  std::vector<PortCounters> counters;  // per global port
  // One shared buffer per switch for the ports this worker owns (nullptr if none).
  std::vector<std::unique_ptr<SharedBuffer>> buffers;
  // Frames other lcores built to leave a port of this one (a module's
  // control frames: BFC pause and resume, Floodgate credit and dstPause);
  // multi-producer, drained by this lcore ahead of data.
  rte_ring* control_in = nullptr;
  RelaxedCounter busy_cycles;
  RelaxedCounter total_cycles;
  // Fidelity: the length of each loop iteration (its work plus any time the
  // lcore was not running), read against the machine's floor.
  LatencyHistogram loop_gap;
  RelaxedCounter loop_gap_max_ns;
  RelaxedCounter loop_gaps_over_50us;  // as tools/floor counts the machine's gaps
  RelaxedCounter loop_gaps_over_200us;
  // The gaps > 50 us of iterations that moved nothing, and those iterations'
  // summed periods: an idle pass is a few polls, so its long gaps are stalls
  // (the machine's, or sluice's own), never work; a busy pass may be load.
  RelaxedCounter idle_loop_gaps_over_50us;
  RelaxedCounter idle_loop_ns;
  // Passes that moved packets and took over 25.6 us, the fidelity target's
  // lateness bucket: frames due during such a pass are late by about as
  // much, so many of them mean the machine is too slow for the load.
  RelaxedCounter busy_loop_gaps_over_25us;
  RelaxedCounter iterations;
  // Exact fabric time (clock.mode exact): this lcore's `now` (0 before it
  // starts), the elements it handled and the distinct instants it visited,
  // its wall time, and whether its loop has ended (the main lcore waits).
  RelaxedCounter clock_now_ns;
  RelaxedCounter exact_events;
  RelaxedCounter exact_instants;
  RelaxedCounter exact_wall_ns;
  // Elements still due at one instant after kMaxEventsPerInstant handlings
  // (a rule that asks to run at once and does nothing); each one stopped
  // the run, which the summary says.
  RelaxedCounter exact_stuck;
  // Elements found at the end with work and no calendar entry for it (a
  // rule that changed something without asking it again): a bug, counted.
  RelaxedCounter exact_missed;
  // The mbuf pool's most mbufs in use at once (exact time samples it every
  // 256 elements handled): what sizing `mbufs` must cover.
  RelaxedCounter mbuf_peak_in_use;
  std::atomic<bool> finished{false};
  // What the kernel did to this lcore's thread while it ran (getrusage):
  // page faults, and how often it was preempted or gave up the core.
  RelaxedCounter minor_faults, major_faults, involuntary_switches, voluntary_switches;
  // Hypervisor steal on this lcore's CPU over the run (main thread, before
  // launch and after stop); -1 when the kernel does not say.
  int64_t steal_ns = -1;
};

struct Runtime {
  Config config;
  std::vector<std::unique_ptr<LinkDirection>> links;
  // mbufs, one supply per NUMA socket in use (index = socket id): a device
  // port's receive queue fills mbufs from the pool on the device's socket.
  // `mbufs` is the main lcore's socket's, for frames sluice builds and
  // emulated hosts send.
  std::vector<std::unique_ptr<MbufSupply>> mbuf_supplies;
  MbufSupply* mbufs = nullptr;
  std::vector<SwitchRuntime> switches;
  std::vector<std::unique_ptr<PortRuntime>> ports;
  std::vector<std::unique_ptr<WorkerRuntime>> workers;
  // Transport hosts' makers of flow ends, one per host port (they build the
  // ends when the hosts start).
  std::vector<std::unique_ptr<TransportMaker>> transport_makers;
  // Modules (switch/path/module.h): each one's process state, at its id
  // (nullptr where the configuration uses it nowhere).
  std::array<std::unique_ptr<ModuleState>, kMaxModules> module_state;
  // Frames one lcore builds to leave another's port cross on the owner's
  // control ring (a module's build asks for them).
  bool control_rings = false;
  // The emulator on several worker lcores: their windows (nullptr: one).
  std::unique_ptr<WindowSync> window_sync;
  uint64_t tsc_hz = 0;
  uint64_t start_ns = 0;
  uint64_t stop_ns = 0;  // when the workers were told to stop (data-path clock)
  // Exact fabric time: the instant the run ends (start_ns + --duration;
  // UINT64_MAX without one), and the instant the worker's loop ended.
  uint64_t end_ns = UINT64_MAX;
  double wall_seconds = 0;           // the workers' run, on the machine's clock
  uint64_t replay_start_ns = 0;      // when capture time replay_origin_ts_ns is due
  uint64_t replay_origin_ts_ns = 0;  // earliest first timestamp of the replayed captures
  int64_t realtime_offset_ns = 0;    // CLOCK_REALTIME minus the data-path clock
  std::atomic<bool> stop{false};

  const std::string& port_label(uint16_t p) const { return ports[p]->cfg->name; }
  const std::string& switch_label(uint16_t p) const {
    return switches[ports[p]->switch_index].cfg->name;
  }
  PortTotals port_totals(uint16_t p) const {
    PortTotals t;
    for (const auto& w : workers) t.add(w->counters[p]);
    return t;
  }
};

// Sets the peer MAC (owner lcore, or before the workers start) and rebuilds
// the port's Ethernet header.
void set_peer_mac(PortRuntime& p, const MacAddr& peer);

// Global index of the port "sw/port" (after the ports are created), or -1.
int find_port(const Runtime& rt, const PortRef& ref);

// The data path's instant for the machine's `real_ns`: the machine's in real
// time; in exact fabric time the worker's own `now`.
uint64_t data_path_now_ns(const Runtime& rt, uint64_t real_ns);

// Exact fabric time: the fixed instant fabric time starts at (1 s, so that
// no time is 0, which some state takes as "never"), whatever the machine's
// clock says; and whether the run is in exact time.
constexpr uint64_t kExactEpochNs = 1'000'000'000;
inline bool exact_time(const Runtime& rt) { return rt.config.clock.mode == ClockMode::kExact; }

// The MAC of PortRuntime::peer_mac's packed form (low 48 bits).
MacAddr unpack_mac(uint64_t packed);

// TSC cycles per second, measured against the kernel's monotonic clock.
uint64_t calibrate_tsc_hz();

// Monotonic nanoseconds from the TSC; the one clock of the data path.
class TscClock {
 public:
  explicit TscClock(uint64_t hz);
  uint64_t now_ns() const;
  uint64_t to_ns(uint64_t cycles) const {
    return static_cast<uint64_t>((static_cast<unsigned __int128>(cycles) * mult_) >> kShift);
  }

 private:
  static constexpr unsigned kShift = 32;
  uint64_t mult_;
};

}  // namespace sluice
