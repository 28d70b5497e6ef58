// sluice-loadgen: a paced source and a latency sink on one DPDK port, for
// measuring a switch's forwarding latency at a set load (docs/benchmarks.md,
// "Latency at a set load"). It sends UDP probes at a fixed rate, each
// carrying the TSC at which it was put in the burst, and receives them back
// from the switch on the same port (the switch routes them out where they
// came in), recording each one's round trip (10 ns bins up to 1 ms, 10 µs
// bins up to 1 s).
//
//   sluice-loadgen [EAL options, one port] -- --dst-mac M [--src-mac M]
//       [--rate-mpps R] [--seconds S] [--warmup S] [--flows N]
//       [--src-ip A] [--dst-ip A] [--json] [--hold]
//
// --rate-mpps 0 sends as fast as the port takes frames (a rate found, not
// set). Paced, probe k is due k / rate after the start: each is sent, or
// forgone when the port's ring is full (the switch is behind), never sent
// late in a catch-up burst. Probes sent during the warm-up are counted
// apart, and a flow's probes are checked for order; after the
// measured window the generator keeps receiving for a drain time, and what
// has not come back by then is lost. Frames that are not its probes (a
// switch's pauses, ARP) are counted and dropped.
//
// --hold: once the result is printed, keep the port open, and polled by
// nothing, until SIGINT or SIGTERM. A switch on the other end of a
// net_memif can then stop before the link goes down: DPDK 22.11's memif
// server unmaps a leaving client's regions on its interrupt thread while
// a worker may still be receiving from them.

#include <rte_cycles.h>
#include <rte_eal.h>
#include <rte_ethdev.h>
#include <rte_ether.h>
#include <rte_ip.h>
#include <rte_mbuf.h>
#include <rte_udp.h>

#include <netinet/in.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <cinttypes>
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include "lib/net/ethertypes.h"
#include "switch/runtime/eal_cleanup.h"
#include "switch/runtime/interrupt_thread.h"

namespace {

using sluice::kEtherTypeIpv4;
using sluice::kEtherTypeSluiceData;
using sluice::kEthHeaderLen;
using sluice::kEthMinFrameLen;
using sluice::kIpv4MinHeaderLen;
using sluice::kSluiceShimLen;

constexpr uint16_t kBurst = 32;
constexpr unsigned kRxRounds = 8;  // bursts taken back per burst sent, at most
constexpr unsigned kPoolSize = 8191;
constexpr uint16_t kRing = 1024;
// Probe layout, after Ethernet (or the 6-byte 0x88B6 shim a BFC switch
// inserts): IPv4 (20), UDP (8), magic (4), sequence (4), TSC (8). 58 bytes,
// a minimum frame with its FCS.
constexpr uint16_t kFrameLen = kEthMinFrameLen;
constexpr uint16_t kUdpAt = kEthHeaderLen + kIpv4MinHeaderLen;
constexpr uint16_t kPayloadAt = kUdpAt + sizeof(rte_udp_hdr);
constexpr uint32_t kMagicWarm = 0x534c5731;     // "SLW1": sent in the warm-up
constexpr uint32_t kMagicMeasure = 0x534c4d31;  // "SLM1": sent in the window
constexpr double kDrainSeconds = 0.5;
// Round trips in 10 ns bins up to 1 ms, then 10 µs bins up to 1 s; later
// ones in the last bin.
constexpr uint64_t kFineNs = 10, kCoarseNs = 10'000;
constexpr size_t kFineBins = 100'000, kCoarseBins = 100'000;
constexpr size_t kBins = kFineBins + kCoarseBins;
constexpr uint64_t kFineEndNs = kFineNs * kFineBins;
constexpr uint16_t kFirstPort = 1024;  // flow f's probes leave UDP port 1024 + f

size_t bin_of(uint64_t ns) {
  if (ns < kFineEndNs) return ns / kFineNs;
  return std::min<uint64_t>(kFineBins + (ns - kFineEndNs) / kCoarseNs, kBins - 1);
}
// A bin's upper edge.
uint64_t upper_ns(size_t b) {
  return b < kFineBins ? (b + 1) * kFineNs : kFineEndNs + (b - kFineBins + 1) * kCoarseNs;
}

std::atomic<bool> g_stop{false};
void on_signal(int) { g_stop.store(true); }

struct Options {
  double rate_mpps = 0;
  double seconds = 2;
  double warmup = 0.5;
  unsigned flows = 64;
  rte_ether_addr src_mac{{0x02, 0, 0, 0, 0, 0xa1}};
  rte_ether_addr dst_mac{};
  bool have_dst_mac = false;
  uint32_t src_ip = RTE_IPV4(10, 0, 0, 2);
  uint32_t dst_ip = RTE_IPV4(10, 1, 0, 1);
  bool json = false;
  bool hold = false;
};

bool parse_ip(const char* s, uint32_t* out) {
  unsigned a, b, c, d;
  char tail;
  if (std::sscanf(s, "%u.%u.%u.%u%c", &a, &b, &c, &d, &tail) != 4) return false;
  if (a > 255 || b > 255 || c > 255 || d > 255) return false;
  *out = RTE_IPV4(a, b, c, d);
  return true;
}

bool parse_number(const char* s, double lo, double hi, double* out) {
  char* end = nullptr;
  errno = 0;
  const double v = std::strtod(s, &end);
  if (errno != 0 || end == s || *end != '\0' || !(v >= lo && v <= hi)) return false;
  *out = v;
  return true;
}

// Returns an error message, or nullptr.
const char* parse(int argc, char** argv, Options* o) {
  for (int i = 0; i < argc; ++i) {
    const std::string a = argv[i];
    const char* v = i + 1 < argc ? argv[i + 1] : nullptr;
    double x;
    if (a == "--json" || a == "--hold") {
      (a == "--json" ? o->json : o->hold) = true;
      continue;
    }
    if (v == nullptr) return "an option is missing its value";
    ++i;
    if (a == "--rate-mpps") {
      if (!parse_number(v, 0, 1000, &o->rate_mpps)) return "--rate-mpps takes 0 to 1000";
    } else if (a == "--seconds") {
      if (!parse_number(v, 0.01, 600, &o->seconds)) return "--seconds takes 0.01 to 600";
    } else if (a == "--warmup") {
      if (!parse_number(v, 0, 600, &o->warmup)) return "--warmup takes 0 to 600";
    } else if (a == "--flows") {
      if (!parse_number(v, 1, 65535, &x) || x != static_cast<unsigned>(x))
        return "--flows takes a whole number from 1 to 65535";
      o->flows = static_cast<unsigned>(x);
    } else if (a == "--src-mac" || a == "--dst-mac") {
      rte_ether_addr mac;
      if (rte_ether_unformat_addr(v, &mac) != 0) return "a MAC is six hex bytes, 02:00:00:00:00:01";
      if (a == "--src-mac") {
        o->src_mac = mac;
      } else {
        o->dst_mac = mac;
        o->have_dst_mac = true;
      }
    } else if (a == "--src-ip") {
      if (!parse_ip(v, &o->src_ip)) return "--src-ip takes a dotted IPv4 address";
    } else if (a == "--dst-ip") {
      if (!parse_ip(v, &o->dst_ip)) return "--dst-ip takes a dotted IPv4 address";
    } else {
      return "unknown option";
    }
  }
  if (!o->have_dst_mac) return "--dst-mac (the switch port's MAC) is required";
  return nullptr;
}

// The probe every frame starts as; each send writes the flow's source port,
// the magic, the sequence and the TSC.
void write_template(const Options& o, uint8_t* f) {
  std::memset(f, 0, kFrameLen);
  auto* eth = reinterpret_cast<rte_ether_hdr*>(f);
  eth->dst_addr = o.dst_mac;
  eth->src_addr = o.src_mac;
  eth->ether_type = rte_cpu_to_be_16(kEtherTypeIpv4);
  auto* ip = reinterpret_cast<rte_ipv4_hdr*>(f + kEthHeaderLen);
  ip->version_ihl = 0x45;
  ip->total_length = rte_cpu_to_be_16(kFrameLen - kEthHeaderLen);
  ip->time_to_live = 64;
  ip->next_proto_id = IPPROTO_UDP;
  ip->src_addr = rte_cpu_to_be_32(o.src_ip);
  ip->dst_addr = rte_cpu_to_be_32(o.dst_ip);
  ip->hdr_checksum = rte_ipv4_cksum(ip);
  auto* udp = reinterpret_cast<rte_udp_hdr*>(f + kUdpAt);
  udp->dst_port = rte_cpu_to_be_16(9);  // discard
  udp->dgram_len = rte_cpu_to_be_16(kFrameLen - kUdpAt);
}

struct Counts {
  uint64_t sent_warm = 0, sent = 0;          // probes put on the port
  uint64_t received = 0, received_warm = 0;  // probes back (window, warm-up)
  uint64_t other = 0;                        // frames that are not probes
  uint64_t tx_full = 0;                      // bursts the port took only in part
  uint64_t due = 0, forgone = 0;             // paced: probes due, and not sent
  uint64_t out_of_order = 0;                 // window probes behind one of their flow seen before
  uint64_t max_ns = 0, sum_ns = 0;
  std::vector<uint64_t> bins = std::vector<uint64_t>(kBins, 0);
  // Per flow: one past the highest sequence back (0: none yet).
  std::vector<uint32_t> next_seq = std::vector<uint32_t>(65536, 0);
};

// The round trip of a received frame if it is a probe of the window; its
// kind goes into the counts.
void take(const rte_mbuf* m, uint64_t now_tsc, double ns_per_tsc, Counts* c) {
  const uint8_t* f = rte_pktmbuf_mtod(m, const uint8_t*);
  const uint16_t len = rte_pktmbuf_data_len(m);
  uint16_t at = kPayloadAt;
  uint16_t type = 0;
  if (len >= kEthHeaderLen) {
    std::memcpy(&type, f + 12, 2);
    type = rte_be_to_cpu_16(type);
  }
  if (type == kEtherTypeSluiceData && len >= kEthHeaderLen + kSluiceShimLen) {
    std::memcpy(&type, f + 12 + kSluiceShimLen, 2);
    type = rte_be_to_cpu_16(type);
    at += kSluiceShimLen;
  }
  if (type != kEtherTypeIpv4 || len < at + 16u) {
    ++c->other;
    return;
  }
  uint32_t magic, seq;
  uint64_t tsc;
  uint16_t sport;
  std::memcpy(&sport, f + at - 8, 2);  // the UDP header's source port
  std::memcpy(&magic, f + at, 4);
  std::memcpy(&seq, f + at + 4, 4);
  std::memcpy(&tsc, f + at + 8, 8);
  if (magic == kMagicWarm) {
    ++c->received_warm;
    return;
  }
  if (magic != kMagicMeasure) {
    ++c->other;
    return;
  }
  // Behind a probe of its flow already back: the switch reordered the flow
  // (the window's probes are one sequence over every flow, so a flow's
  // sequences rise; flows may pass one another).
  uint32_t& next = c->next_seq[rte_be_to_cpu_16(sport)];
  if (seq < next) ++c->out_of_order;
  next = std::max(next, seq + 1);
  ++c->received;
  const uint64_t ns = static_cast<uint64_t>(static_cast<double>(now_tsc - tsc) * ns_per_tsc);
  ++c->bins[bin_of(ns)];
  c->sum_ns += ns;
  c->max_ns = std::max(c->max_ns, ns);
}

// Upper edge of the bin holding quantile q of the window's round trips.
uint64_t quantile_ns(const Counts& c, double q) {
  if (c.received == 0) return 0;
  const uint64_t rank = static_cast<uint64_t>(q * static_cast<double>(c.received - 1)) + 1;
  uint64_t seen = 0;
  for (size_t b = 0; b < kBins; ++b) {
    seen += c.bins[b];
    if (seen >= rank) return upper_ns(b);
  }
  return upper_ns(kBins - 1);
}

int setup_port(uint16_t port, rte_mempool* pool) {
  rte_eth_conf conf{};
  int rc = rte_eth_dev_configure(port, 1, 1, &conf);
  if (rc == 0)
    rc = rte_eth_rx_queue_setup(port, 0, kRing, rte_eth_dev_socket_id(port), nullptr, pool);
  if (rc == 0) rc = rte_eth_tx_queue_setup(port, 0, kRing, rte_eth_dev_socket_id(port), nullptr);
  return rc;
}

bool wait_link(uint16_t port, int ms) {
  for (int i = 0; i < ms / 10 && !g_stop.load(); ++i) {
    rte_eth_link link{};
    if (rte_eth_link_get_nowait(port, &link) == 0 && link.link_status == RTE_ETH_LINK_UP)
      return true;
    rte_delay_ms(10);
  }
  return false;
}

// Starts the port and waits for its link, for up to 30 s. A memif client
// whose server is not listening yet, or whose server had not started its
// port when it connected, gets no link: it starts again after a pause.
bool start_link(uint16_t port) {
  const uint64_t deadline = rte_get_timer_cycles() + 30 * rte_get_timer_hz();
  while (rte_get_timer_cycles() < deadline && !g_stop.load()) {
    if (rte_eth_dev_start(port) == 0) {
      if (wait_link(port, 900)) return true;
      rte_eth_dev_stop(port);
    }
    rte_delay_ms(100);
  }
  return false;
}

void run(const Options& o, uint16_t port, rte_mempool* pool, Counts* c) {
  alignas(64) uint8_t tmpl[kFrameLen];
  write_template(o, tmpl);
  const uint64_t hz = rte_get_tsc_hz();
  const double ns_per_tsc = 1e9 / static_cast<double>(hz);
  const uint64_t start = rte_rdtsc();
  const uint64_t window_at = start + static_cast<uint64_t>(o.warmup * static_cast<double>(hz));
  const uint64_t end_at = window_at + static_cast<uint64_t>(o.seconds * static_cast<double>(hz));
  // Paced: probe k is due at start + k / rate; those due before window_at
  // are the warm-up's, and the last is the one due before end_at. Unpaced
  // (0 Mpps): a burst every turn until end_at.
  const double per_tsc = o.rate_mpps * 1e6 / static_cast<double>(hz);
  const bool paced = per_tsc > 0;
  const auto due_by = [&](uint64_t t) {
    return static_cast<uint64_t>(static_cast<double>(t - start) * per_tsc);
  };
  const uint64_t warm_due = paced ? due_by(window_at) : 0;
  c->due = paced ? due_by(end_at) : 0;
  uint64_t put = 0;  // probes sent or forgone
  uint64_t drain_at = UINT64_MAX;
  uint32_t seq = 0;
  rte_mbuf* tx[kBurst];
  rte_mbuf* rx[kBurst];
  for (;;) {
    const uint64_t now = rte_rdtsc();
    if (now >= drain_at || g_stop.load(std::memory_order_relaxed)) break;
    const bool sending = paced ? put < c->due : now < end_at;
    if (!sending && drain_at == UINT64_MAX)
      drain_at = now + static_cast<uint64_t>(kDrainSeconds * static_cast<double>(hz));
    const uint64_t due = !sending ? put : paced ? std::min(c->due, due_by(now)) : put + kBurst;
    // A burst stays within the warm-up or within the window.
    const uint64_t until = paced && put < warm_due ? std::min(due, warm_due) : due;
    const uint16_t n = static_cast<uint16_t>(std::min<uint64_t>(until - put, kBurst));
    if (n > 0 && rte_pktmbuf_alloc_bulk(pool, tx, n) == 0) {
      const bool measured = paced ? put >= warm_due : now >= window_at;
      const uint32_t magic = measured ? kMagicMeasure : kMagicWarm;
      for (uint16_t i = 0; i < n; ++i) {
        uint8_t* f = reinterpret_cast<uint8_t*>(rte_pktmbuf_append(tx[i], kFrameLen));
        std::memcpy(f, tmpl, kFrameLen);
        const uint16_t sport =
            rte_cpu_to_be_16(static_cast<uint16_t>(kFirstPort + (put + i) % o.flows));
        std::memcpy(f + kUdpAt, &sport, 2);
        const uint32_t s = measured ? seq + i : 0;
        std::memcpy(f + kPayloadAt, &magic, 4);
        std::memcpy(f + kPayloadAt + 4, &s, 4);
        std::memcpy(f + kPayloadAt + 8, &now, 8);
      }
      const uint16_t sent = rte_eth_tx_burst(port, 0, tx, n);
      put += sent;
      if (measured) {
        c->sent += sent;
        seq += sent;
      } else {
        c->sent_warm += sent;
      }
      if (sent < n) {
        // What the port did not take (its ring full: the switch is behind)
        // is forgone, with everything else due by now: a paced source that
        // fell behind would otherwise send in bursts to catch up.
        ++c->tx_full;
        rte_pktmbuf_free_bulk(tx + sent, n - sent);
        if (paced) {
          c->forgone += due - put;
          put = due;
        }
      }
    }
    // Received until the port has no full burst left (a few at most): a
    // generator that sent a burst for each one it took back would, once
    // behind, let the switch's ring toward it fill, and the switch would
    // slow to the rate of its sends.
    for (unsigned round = 0; round < kRxRounds; ++round) {
      const uint16_t got = rte_eth_rx_burst(port, 0, rx, kBurst);
      if (got == 0) break;
      const uint64_t at = rte_rdtsc();
      for (uint16_t i = 0; i < got; ++i) take(rx[i], at, ns_per_tsc, c);
      rte_pktmbuf_free_bulk(rx, got);
      if (got < kBurst) break;
    }
  }
}

// The result, on stdout (flushed: with --hold the process lives on).
void report(const Options& o, const Counts& c) {
  const uint64_t lost = c.sent - std::min(c.sent, c.received);
  const double mean =
      c.received ? static_cast<double>(c.sum_ns) / static_cast<double>(c.received) : 0;
  const double sent_mpps = static_cast<double>(c.sent) / o.seconds / 1e6;
  const double received_mpps = static_cast<double>(c.received) / o.seconds / 1e6;
  if (o.json) {
    std::printf("{\"rate_mpps\": %.3f, \"seconds\": %.3f, \"sent\": %" PRIu64
                ", \"sent_mpps\": %.3f, \"received\": %" PRIu64
                ", \"received_mpps\": %.3f"
                ", \"lost\": %" PRIu64 ", \"out_of_order\": %" PRIu64 ", \"other\": %" PRIu64
                ", \"tx_full\": %" PRIu64 ", \"due\": %" PRIu64 ", \"forgone\": %" PRIu64
                ", \"sent_warm\": %" PRIu64 ", \"received_warm\": %" PRIu64
                ", \"mean_ns\": %.0f, \"p50_ns\": %" PRIu64 ", \"p90_ns\": %" PRIu64
                ", \"p99_ns\": %" PRIu64 ", \"p999_ns\": %" PRIu64 ", \"max_ns\": %" PRIu64 "}\n",
                o.rate_mpps, o.seconds, c.sent, sent_mpps, c.received, received_mpps, lost,
                c.out_of_order, c.other, c.tx_full, c.due, c.forgone, c.sent_warm, c.received_warm,
                mean, quantile_ns(c, 0.5), quantile_ns(c, 0.9), quantile_ns(c, 0.99),
                quantile_ns(c, 0.999), c.max_ns);
  } else {
    std::printf("sent %.3f Mpps (asked %.3f), back %.3f Mpps, lost %" PRIu64 ", reordered %" PRIu64
                "; round trip mean %.0f ns, p50 %" PRIu64 ", p99 %" PRIu64 ", p99.9 %" PRIu64
                ", max %" PRIu64 " ns\n",
                sent_mpps, o.rate_mpps, received_mpps, lost, c.out_of_order, mean,
                quantile_ns(c, 0.5), quantile_ns(c, 0.99), quantile_ns(c, 0.999), c.max_ns);
  }
  std::fflush(stdout);
}

}  // namespace

int main(int argc, char** argv) {
  const int eal = rte_eal_init(argc, argv);
  if (eal < 0) {
    std::fprintf(stderr, "sluice-loadgen: EAL init failed: %s\n", rte_strerror(rte_errno));
    return 1;
  }
  Options o;
  if (const char* err = parse(argc - eal - 1, argv + eal + 1, &o)) {
    std::fprintf(
        stderr,
        "sluice-loadgen: %s\nusage: sluice-loadgen [EAL options, one port] -- --dst-mac M "
        "[--src-mac M] [--rate-mpps R] [--seconds S] [--warmup S] [--flows N] [--src-ip A] "
        "[--dst-ip A] [--json] [--hold]\n",
        err);
    sluice::cleanup_eal();
    return 2;
  }
  std::signal(SIGINT, on_signal);
  std::signal(SIGTERM, on_signal);
  if (rte_eth_dev_count_avail() != 1) {
    std::fprintf(stderr, "sluice-loadgen: needs exactly one port (--vdev), found %u\n",
                 rte_eth_dev_count_avail());
    sluice::cleanup_eal();
    return 2;
  }
  uint16_t port = 0;
  RTE_ETH_FOREACH_DEV(port) break;
  rte_mempool* pool = rte_pktmbuf_pool_create("loadgen", kPoolSize, 256, 0,
                                              RTE_MBUF_DEFAULT_BUF_SIZE, rte_socket_id());
  int rc = pool == nullptr ? -rte_errno : setup_port(port, pool);
  if (rc != 0) {
    std::fprintf(stderr, "sluice-loadgen: port %u: %s\n", port, rte_strerror(-rc));
    sluice::cleanup_eal();
    return 1;
  }
  if (!start_link(port)) {
    std::fprintf(stderr, "sluice-loadgen: port %u: no link within 30 s (is the switch's end up?)\n",
                 port);
    sluice::run_on_interrupt_thread([port] { rte_eth_dev_close(port); });
    sluice::cleanup_eal();
    return 1;
  }
  static Counts c;
  run(o, port, pool, &c);
  report(o, c);
  if (o.hold) {
    while (!g_stop.load()) rte_delay_us_sleep(10'000);
  }
  // On the thread where a memif port handles its peer's disconnect
  // (switch/runtime/interrupt_thread.h).
  sluice::stop_and_close_on_interrupt_thread(port);
  sluice::cleanup_eal();
  return 0;
}
