#include "switch/runtime/runtime_builder.h"

#include <rte_bus.h>
#include <rte_dev.h>
#include <rte_ethdev.h>
#include <rte_lcore.h>
#include <rte_ring.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <map>
#include <thread>

#include "lib/common/seeds.h"
#include "lib/config/config_validate.h"
#include "lib/config/default_workers.h"
#include "lib/config/memory_estimate.h"
#include "lib/emulator/hosts/transport_check.h"
#include "lib/emulator/hosts/transport_factory.h"
#include "lib/emulator/link/link_ring.h"
#include "lib/emulator/partition.h"
#include "lib/mechanisms/bfc/hop_rtt.h"
#include "lib/mechanisms/pfc/pfc_classes.h"
#include "lib/mechanisms/tcd/tcd_params.h"
#include "lib/net/ethertypes.h"
#include "lib/tm/class_map.h"
#include "switch/emulator/window_sync.h"
#include "switch/mechanisms/registry.h"
#include "switch/path/stage_plan.h"
#include "switch/ports/ethdev_medium.h"
#include "switch/ports/host_medium.h"
#include "switch/ports/link_medium.h"
#include "switch/runtime/interrupt_thread.h"

namespace sluice {
namespace {

constexpr uint16_t kRxDescriptors = 1024;
constexpr uint16_t kTxDescriptors = 1024;
constexpr unsigned kMbufCache = 256;

std::string device_name(const std::string& device) { return device.substr(0, device.find(',')); }

std::string port_ref(const SwitchConfig& s, const PortConfig& p) { return s.name + "/" + p.name; }

// Finds the ethdev for a device string, probing it if EAL has not already.
std::string find_or_probe(const std::string& device, uint16_t* port_id) {
  const std::string name = device_name(device);
  if (rte_eth_dev_get_port_by_name(name.c_str(), port_id) == 0) return "";
  int rc = rte_dev_probe(device.c_str());
  if (rc != 0) return "cannot probe device \"" + device + "\": " + rte_strerror(-rc);
  if (rte_eth_dev_get_port_by_name(name.c_str(), port_id) != 0)
    return "device \"" + device + "\" probed but no ethdev named \"" + name + "\" appeared";
  return "";
}

// The mbufs of NUMA socket `socket`, made on first use: `mbufs` buffers of
// `mbuf_size` bytes of frame room (plus the headroom); in fabric time more
// as the fabric needs them (mbuf_supply.h).
std::string supply_on_socket(Runtime& rt, unsigned socket, MbufSupply** out) {
  if (socket >= RTE_MAX_NUMA_NODES)
    return "NUMA socket " + std::to_string(socket) + " beyond DPDK's RTE_MAX_NUMA_NODES";
  if (rt.mbuf_supplies.size() <= socket) rt.mbuf_supplies.resize(socket + 1);
  if (rt.mbuf_supplies[socket] == nullptr) {
    // mbuf_size is the frame room; the headroom comes on top (at most 16 bits).
    static_assert(kMaxMbufSize + RTE_PKTMBUF_HEADROOM <= UINT16_MAX);
    const auto room = static_cast<uint16_t>(rt.config.mbuf_size + RTE_PKTMBUF_HEADROOM);
    auto s = std::make_unique<MbufSupply>();
    std::string err = s->start(rt.config.mbufs, room, static_cast<int>(socket), exact_time(rt));
    if (!err.empty()) return err;
    rt.mbuf_supplies[socket] = std::move(s);
  }
  *out = rt.mbuf_supplies[socket].get();
  return "";
}

// Where the port's data carries the 6-byte 0x88B6 shim (StagePlan::data_shim:
// between BFC switches, and DIBS switches counting detours), so does its
// peer's: a full-size frame is `mtu` + 6 bytes past its Ethernet header,
// which the device must receive. A device that cannot (net_memif takes
// 1518-byte frames at most) keeps `mtu`, with a warning: it may then drop
// full-size frames from a sluice peer.
uint32_t receive_mtu(const SwitchConfig& sw, const PortConfig& pc, const rte_eth_dev_info& info) {
  if (!plan_stages(sw, pc).data_shim) return pc.mtu;
  // The L2 overhead DPDK adds to an MTU to check it against max_rx_pktlen.
  const uint32_t overhead = info.max_mtu != UINT16_MAX && info.max_rx_pktlen > info.max_mtu
                                ? info.max_rx_pktlen - info.max_mtu
                                : RTE_ETHER_HDR_LEN + RTE_ETHER_CRC_LEN;
  const uint32_t mtu = pc.mtu + kSluiceShimLen;
  if (mtu <= info.max_mtu && mtu + overhead <= info.max_rx_pktlen) return mtu;
  std::fprintf(stderr,
               "sluice: warning: %s/%s: the device receives at most %u-byte frames, so full-size "
               "frames from a sluice peer (mtu %u + the 6-byte 0x88B6 shim) may be dropped by it; "
               "lower the port's mtu by 6 on both sides\n",
               sw.name.c_str(), pc.name.c_str(), info.max_rx_pktlen, pc.mtu);
  return pc.mtu;
}

// A device port's rx queues: its owner's, and one per worker that lists
// it in `receive`.
uint16_t rx_queue_count(const Config& c, const PortRuntime& p) {
  const SwitchConfig& sw = c.switches[p.switch_index];
  uint16_t n = 1;
  for (const WorkerConfig& w : c.workers) {
    for (const PortRef& ref : w.receive) n += ref.sw == sw.name && ref.port == p.cfg->name;
  }
  return n;
}

std::string start_ethdev(Runtime& rt, PortRuntime& p) {
  const std::string& device = p.cfg->device;
  std::string err = find_or_probe(device, &p.eth_port);
  if (!err.empty()) return err;
  const uint16_t id = p.eth_port;
  // The device receives frames up to the port's mtu (DPDK's default is 1500):
  // jumbo frames need `mtu` here and an `mbuf_size` that holds them.
  rte_eth_dev_info info{};
  int rc = rte_eth_dev_info_get(id, &info);
  if (rc != 0) return "device info of " + device + ": " + rte_strerror(-rc);
  const uint32_t mtu = receive_mtu(rt.config.switches[p.switch_index], *p.cfg, info);
  if (mtu < info.min_mtu || mtu > info.max_mtu)
    return "mtu " + std::to_string(mtu) + (mtu != p.cfg->mtu ? " (mtu + the 6-byte shim)" : "") +
           " outside what " + device + " supports (" + std::to_string(info.min_mtu) + ".." +
           std::to_string(info.max_mtu) + ")";
  rte_eth_conf conf{};
  conf.rxmode.mtu = mtu;
  // Queue 0 for the owner, one more for each worker that receives a share.
  const uint16_t rx_queues = rx_queue_count(rt.config, p);
  if (rx_queues > info.max_rx_queues)
    return std::to_string(rx_queues) + " rx queues asked (the owner's and " +
           std::to_string(rx_queues - 1) + " in workers[].receive), but " + device +
           " has at most " + std::to_string(info.max_rx_queues);
  if (rx_queues > 1) {
    // The NIC spreads by the 5-tuple (IPv4 with TCP or UDP ports), so a flow
    // stays on one queue; what it cannot hash (ARP, pauses, shimmed frames)
    // lands on queue 0, the owner's.
    const uint64_t hf =
        (RTE_ETH_RSS_IP | RTE_ETH_RSS_TCP | RTE_ETH_RSS_UDP) & info.flow_type_rss_offloads;
    if (hf != 0) {
      conf.rxmode.mq_mode = RTE_ETH_MQ_RX_RSS;
      conf.rx_adv_conf.rss_conf.rss_hf = hf;
    } else {
      std::fprintf(stderr,
                   "sluice: note: %s has no RSS: each of its %u rx queues receives what the "
                   "device puts on it (net_pcap: one rx_pcap per queue)\n",
                   device.c_str(), rx_queues);
    }
  }
  rc = rte_eth_dev_configure(id, rx_queues, 1, &conf);
  if (rc != 0) return "configure " + device + ": " + rte_strerror(-rc);
  uint16_t nb_rx = kRxDescriptors, nb_tx = kTxDescriptors;
  rte_eth_dev_adjust_nb_rx_tx_desc(id, &nb_rx, &nb_tx);
  // Descriptors and mbufs on the device's NUMA socket; a device with none
  // (virtual devices, SOCKET_ID_ANY) uses the main lcore's.
  const int socket = rte_eth_dev_socket_id(id);
  const unsigned s = socket < 0 ? rte_socket_id() : static_cast<unsigned>(socket);
  MbufSupply* supply = nullptr;
  err = supply_on_socket(rt, s, &supply);
  if (!err.empty()) return device + ": " + err;
  p.rx_pool = supply->first();  // real time: one pool, never grown
  for (uint16_t q = 0; q < rx_queues; ++q) {
    rc = rte_eth_rx_queue_setup(id, q, nb_rx, s, nullptr, p.rx_pool);
    if (rc != 0)
      return "rx queue " + std::to_string(q) + " of " + device + ": " + rte_strerror(-rc);
  }
  rc = rte_eth_tx_queue_setup(id, 0, nb_tx, s, nullptr);
  if (rc != 0) return "tx queue of " + device + ": " + rte_strerror(-rc);
  if (p.cfg->mac) {
    rte_ether_addr a;
    std::copy(p.cfg->mac->begin(), p.cfg->mac->end(), a.addr_bytes);
    rte_eth_dev_default_mac_addr_set(id, &a);  // virtual devices may refuse; we use ours anyway
    p.mac = *p.cfg->mac;
  } else {
    rte_ether_addr a;
    rte_eth_macaddr_get(id, &a);
    std::copy(a.addr_bytes, a.addr_bytes + 6, p.mac.begin());
  }
  rte_eth_promiscuous_enable(id);  // not all PMDs support it; routing does not need it
  rc = rte_eth_dev_start(id);
  if (rc != 0) return "start " + device + ": " + rte_strerror(-rc);
  return "";
}

// A locally administered MAC for a port that has no device to ask: 02:5c:
// then switch index, and the global port index.
MacAddr generated_mac(size_t switch_index, size_t port_index) {
  return MacAddr{0x02,
                 0x5c,
                 static_cast<uint8_t>(switch_index),
                 0,
                 static_cast<uint8_t>(port_index >> 8),
                 static_cast<uint8_t>(port_index)};
}

// The emulated host sends no faster than its link, from per-destination or
// per-flow queues, and honours what sluice sends it (PAUSE, PFC per class,
// BFC per queue for a BFC NIC). Its PFC classes are the switch's. A host
// running pFabric sends by rank from a queue per flow (docs/transports.md
// "pFabric").
void set_host_nic(PcapPort& pcap, const SwitchConfig& sc, const PortConfig& pc, bool by_rank) {
  HostNicConfig nic;
  nic.rate_bps = pc.rate_bps;
  nic.overhead_bytes = pc.wire_overhead_bytes;
  nic.queues = pc.nic.queues;
  nic.capacity = pc.nic.frames;
  // The NIC keeps an idle queue as a BFC switch keeps a flow's (2 x hop RTT).
  nic.sticky_ns = bfc_sticky_ns(pc.nic.sticky_ns, pc.hop_rtt_ns);
  nic.bfc = pc.nic.mode == NicMode::kBfc;
  nic.floodgate = pc.nic.mode == NicMode::kFloodgate;
  nic.by_rank = by_rank;
  nic.reply_queue = pc.nic.reply_queue;
  const uint32_t queues = sc.tm.queues_per_port;
  std::array<uint8_t, 64> by_dscp;
  for (uint8_t d = 0; d < 64; ++d)
    by_dscp[d] = priority_of_queue(queue_for_class(sc.tm.class_mapping, d, queues), queues);
  pcap.set_host_nic(nic, by_rank ? NicQueueKey::kFlow : pc.nic.queue_by, by_dscp);
}

// Exact time: how much of a replayed frame is ever seen. Only the captures
// read payload (every rule reads headers, and exact time has no device
// port), so a frame needs no more copied than the longest capture keeps,
// with room for the headers a hop may add or strip; 0 (all of it) when a
// capture keeps whole frames.
uint32_t replay_copy_bytes(const Config& c) {
  constexpr uint32_t kHeaderRoom = 64;
  uint32_t most = 0;
  for (const SwitchConfig& sw : c.switches) {
    for (const PortConfig& p : sw.ports) {
      if (p.pcap && !p.pcap->tx_path.empty()) most = std::max(most, p.pcap->snaplen);
    }
  }
  return most >= kPcapWriteSnaplen - kHeaderRoom ? 0 : most + kHeaderRoom;
}

// A transport host's own MAC when the configuration gives none: 02:5d:
// then switch index and global port index (the port's is 02:5c:...).
MacAddr host_mac(size_t switch_index, size_t port_index) {
  MacAddr m = generated_mac(switch_index, port_index);
  m[1] = 0x5d;
  return m;
}

// The port's host runs the configuration's transport on its flows.
void set_transport_host(Runtime& rt, PortRuntime& p, const std::vector<FlowListEntry>& flows) {
  const PortConfig& pc = *p.cfg;
  const TransportConfig& t = rt.config.transport;
  auto maker = std::make_unique<ConfiguredTransport>(
      t, transport_context(t, pc.rate_bps, pc.wire_overhead_bytes));
  auto host = std::make_unique<TransportHost>(*pc.peer_ipv4, flows, *maker);
  rt.transport_makers.push_back(std::move(maker));
  const MacAddr own = pc.peer_mac ? *pc.peer_mac : host_mac(p.switch_index, p.index);
  FrameAddrs a{};
  std::memcpy(a.dst_mac, p.mac.data(), 6);
  std::memcpy(a.src_mac, own.data(), 6);
  a.src_ip = *pc.peer_ipv4;
  a.ttl = t.ttl;
  p.pcap->set_transport_host(std::move(host), a, t.data_dscp, t.ack_dscp);
  // The host answers no ARP: the switch knows its MAC from the start.
  if (!pc.peer_mac) set_peer_mac(p, own);
}

std::string create_ports(Runtime& rt) {
  const uint32_t copy_bytes = replay_copy_bytes(rt.config);
  std::vector<FlowListEntry> flows;
  {
    std::vector<ConfigError> errors;
    if (!check_transport_flows(rt.config, &flows, &errors)) return errors.front().to_string();
  }
  for (size_t si = 0; si < rt.config.switches.size(); ++si) {
    const SwitchConfig& sc = rt.config.switches[si];
    SwitchRuntime& sw = rt.switches[si];
    for (const PortConfig& pc : sc.ports) {
      auto p = std::make_unique<PortRuntime>();
      p->index = static_cast<uint16_t>(rt.ports.size());
      p->switch_index = static_cast<uint16_t>(si);
      p->cfg = &pc;
      p->mtu = pc.mtu;
      if (!pc.link_peer.empty()) {
        p->kind = PortKind::kLink;
        p->mac = pc.mac ? *pc.mac : generated_mac(si, rt.ports.size());
      } else if (pc.pcap) {
        p->kind = PortKind::kPcap;
        p->mac = pc.mac ? *pc.mac : generated_mac(si, rt.ports.size());
        std::string err;
        std::unique_ptr<PcapPort> host = PcapPort::open(*pc.pcap, *rt.mbufs, &err, exact_time(rt));
        if (!host) return port_ref(sc, pc) + ": " + err;
        p->pcap = host.get();
        const bool pfabric_host = rt.config.transport.kind == TransportKind::kPfabric &&
                                  is_transport_host_port(rt.config, pc);
        set_host_nic(*p->pcap, sc, pc, pfabric_host);
        // What leaves toward the host is stamped when its last bit reaches
        // the host: after the host link's delay (exact time only; else 0).
        auto wire =
            std::make_unique<LinkTiming>(pc.rate_bps, pc.wire_overhead_bytes, pc.link_delay_ns);
        p->medium = std::make_unique<HostMedium>(std::move(host), std::move(wire));
        if (rt.config.clock.mode == ClockMode::kExact)
          p->pcap->set_exact_link(pc.link_delay_ns, pc.mtu, copy_bytes);
        if (is_transport_host_port(rt.config, pc)) set_transport_host(rt, *p, flows);
      } else {
        std::string err = start_ethdev(rt, *p);
        if (!err.empty()) return port_ref(sc, pc) + ": " + err;
        p->medium = std::make_unique<EthdevMedium>(p->eth_port);
      }
      if (pc.peer_mac) set_peer_mac(*p, *pc.peer_mac);
      sw.ports.push_back(p->index);
      rt.ports.push_back(std::move(p));
    }
  }
  return "";
}

// Global port index of "switch/port", or -1.

std::string assign_workers(Runtime& rt) {
  std::vector<unsigned> lcores;
  unsigned lc;
  RTE_LCORE_FOREACH_WORKER(lc) { lcores.push_back(lc); }
  if (lcores.empty())
    return "sluice needs at least one worker lcore besides the main one (e.g. -l 0,1)";
  std::map<unsigned, unsigned> slot_of_lcore;
  auto add_worker = [&](unsigned lcore) {
    auto w = std::make_unique<WorkerRuntime>();
    w->slot = static_cast<unsigned>(rt.workers.size());
    w->lcore = lcore;
    slot_of_lcore[lcore] = w->slot;
    rt.workers.push_back(std::move(w));
  };
  if (rt.config.workers.empty()) {
    for (unsigned l : lcores) add_worker(l);
    // The emulator keeps switches whole on an lcore (lib/emulator/partition.h).
    const auto n = static_cast<unsigned>(rt.workers.size());
    const std::vector<unsigned> slots =
        exact_time(rt) ? emulator_partition(rt.config, n) : default_port_workers(rt.config, n);
    for (const auto& p : rt.ports) {
      const unsigned slot = slots[p->index];
      p->owner_slot = slot;
      rt.workers[slot]->ports.push_back(p->index);
    }
    return "";
  }
  for (const WorkerConfig& wc : rt.config.workers) {
    if (std::find(lcores.begin(), lcores.end(), wc.lcore) == lcores.end())
      return "workers: lcore " + std::to_string(wc.lcore) +
             " is not a worker lcore of this EAL (pass it with -l or --lcores)";
    add_worker(wc.lcore);
    WorkerRuntime& w = *rt.workers.back();
    for (const PortRef& ref : wc.ports) {
      const int idx = find_port(rt, ref);
      if (idx < 0) return "workers: unknown port " + ref.sw + "/" + ref.port;
      rt.ports[idx]->owner_slot = w.slot;
      w.ports.push_back(static_cast<uint16_t>(idx));
    }
  }
  // Shares of device ports, queues numbered in the order of the workers
  // (rx_queue_count counts them in the same order).
  std::vector<uint16_t> next_queue(rt.ports.size(), 1);
  for (size_t i = 0; i < rt.config.workers.size(); ++i) {
    for (const PortRef& ref : rt.config.workers[i].receive) {
      const int idx = find_port(rt, ref);
      if (idx < 0 || rt.ports[idx]->kind != PortKind::kEthdev)
        return "workers: " + ref.sw + "/" + ref.port + " is not a device port";
      PortRuntime& p = *rt.ports[idx];
      const uint16_t q = next_queue[idx]++;
      rt.workers[i]->receive.push_back(
          RxShare{p.index, q, std::make_unique<EthdevMedium>(p.eth_port, q)});
    }
  }
  return "";
}

std::string create_rings(Runtime& rt) {
  const size_t n = rt.workers.size();
  for (auto& w : rt.workers) {
    w->to.assign(n, nullptr);
    w->from.assign(n, nullptr);
    w->counters = std::vector<PortCounters>(rt.ports.size());
  }
  for (size_t a = 0; a < n; ++a) {
    for (size_t b = 0; b < n; ++b) {
      if (a == b) continue;
      const std::string name = "sluice_r" + std::to_string(a) + "_" + std::to_string(b);
      rte_ring* r =
          rte_ring_create(name.c_str(), kWorkerRingSlots, static_cast<int>(rte_socket_id()),
                          RING_F_SP_ENQ | RING_F_SC_DEQ);
      if (r == nullptr) return "cannot create ring " + name + ": " + rte_strerror(rte_errno);
      rt.workers[a]->to[b] = r;
      rt.workers[b]->from[a] = r;
    }
  }
  return "";
}

// Each internal link gets one ring per direction, produced by the sender's
// owner lcore and consumed by the receiver's.
std::string create_links(Runtime& rt) {
  const bool exact = exact_time(rt);
  for (const auto& p : rt.ports) {
    if (p->kind != PortKind::kLink) continue;
    const PortConfig& pc = *p->cfg;
    const size_t slash = pc.link_peer.find('/');
    const int peer =
        find_port(rt, PortRef{pc.link_peer.substr(0, slash), pc.link_peer.substr(slash + 1)});
    if (peer < 0)
      return rt.switch_label(p->index) + "/" + pc.name + ": no link peer " + pc.link_peer;
    PortRuntime& q = *rt.ports[peer];
    set_peer_mac(*p, q.mac);
    // Its slots in the process's memory, resident as frames fill them (not
    // a memzone of EAL's: DPDK has at most RTE_MAX_MEMZONE (2,560) and a
    // k = 16 fat-tree has 4,096 link directions).
    const uint32_t slots =
        exact ? exact_link_ring_size(pc.rate_bps, pc.link_delay_ns,
                                     kEthHeaderLen + pc.wire_overhead_bytes, kBurst)
              : link_ring_size(pc.rate_bps, pc.link_delay_ns);
    auto d = std::make_unique<LinkDirection>(
        slots, pc.rate_bps, pc.wire_overhead_bytes, pc.link_delay_ns, pc.link_loss,
        derive_seed(rt.config.seed, SeedStream::kLinkLoss, p->index));
    d->fifo_ns = pc.link_fifo_ns;
    d->rx_port = q.index;
    p->link_out = d.get();
    rt.links.push_back(std::move(d));
  }
  // Each link port's medium: the direction it sends into and the one its
  // peer sends into.
  for (const auto& p : rt.ports) {
    if (p->kind != PortKind::kLink) continue;
    LinkDirection& in = *rt.ports[p->link_out->rx_port]->link_out;
    auto medium = std::make_unique<LinkMedium>(*p->link_out, in, p->mtu);
    p->link_lateness = &medium->lateness();
    p->medium = std::move(medium);
  }
  return "";
}

// Routes of one switch: connected subnets of port addresses, the ports' own
// addresses (delivered locally), then the configured routes, which win over a
// connected route with the same prefix. A route 0.0.0.0/0 is kept beside the
// LPM table (default_group), so every other route is more specific.
std::string create_routes(SwitchRuntime& sw, bool exact) {
  const SwitchConfig& sc = *sw.cfg;
  if (exact) {
    sw.routes = std::make_unique<PrefixTable>();
  } else {
    rte_lpm_config lc{};
    lc.max_rules = lpm_max_rules(sc);
    lc.number_tbl8s = kLpmTbl8Groups;
    const std::string name = "sluice_lpm" + std::to_string(sw.index);
    sw.lpm = rte_lpm_create(name.c_str(), static_cast<int>(rte_socket_id()), &lc);
    if (sw.lpm == nullptr)
      return "switch " + sc.name + ": cannot create LPM table (" + rte_strerror(rte_errno) +
             "); give EAL more memory with -m";
  }
  auto add = [&](uint32_t addr, uint8_t len, uint32_t group) {
    if (sw.routes) {
      sw.routes->add(addr, len, group);
      return 0;
    }
    return rte_lpm_add(sw.lpm, addr, len, group);
  };
  std::map<std::vector<uint16_t>, uint32_t> group_ids;
  auto group_for = [&](std::vector<uint16_t> members) {
    auto it = group_ids.find(members);
    if (it != group_ids.end()) return it->second;
    NextHopGroup16 g;
    g.size = static_cast<uint16_t>(members.size());
    std::copy(members.begin(), members.end(), g.ports);
    sw.groups.push_back(g);
    const uint32_t id = static_cast<uint32_t>(sw.groups.size() - 1);
    group_ids.emplace(std::move(members), id);
    return id;
  };
  for (size_t i = 0; i < sc.ports.size(); ++i) {
    const auto& a = sc.ports[i].ipv4;
    if (!a) continue;
    const uint32_t net = a->len == 0 ? 0 : a->addr & ~((1ull << (32 - a->len)) - 1);
    add(net, a->len, group_for({sw.ports[i]}));
    add(a->addr, 32, kLocalNextHop);
  }
  for (const RouteConfig& r : sc.routes) {
    std::vector<uint16_t> members;
    for (const std::string& pn : r.ports) {
      for (size_t i = 0; i < sc.ports.size(); ++i)
        if (sc.ports[i].name == pn) members.push_back(sw.ports[i]);
    }
    // Members in ascending port order, as RouteTable and docs/packet-processing.md
    // define them, so ECMP choices do not depend on how the route lists them.
    std::sort(members.begin(), members.end());
    members.erase(std::unique(members.begin(), members.end()), members.end());
    if (members.size() > kMaxEcmp)
      return "switch " + sc.name + ": a route has more than " + std::to_string(kMaxEcmp) +
             " ECMP members";
    // Neither table has depth 0: the default route is looked up on a miss.
    if (r.prefix.len == 0) {
      sw.default_group = group_for(members);
      continue;
    }
    const int rc = add(r.prefix.addr, r.prefix.len, group_for(members));
    if (rc != 0) return "switch " + sc.name + ": cannot add route: " + rte_strerror(-rc);
  }
  return "";
}

// A software loop serves a port every few microseconds and the OS may
// preempt it for longer, so the bucket holds 200 us of line rate: a hiccup up
// to that long costs no rate, and the catch-up burst is re-serialised at line
// rate by the next link (internal links, capture ports, a NIC at that rate).
// Longer gaps are counted as shaper_lost_ns.
uint64_t default_burst(uint64_t rate_bps) {
  return std::max<uint64_t>(64 * 1024, rate_bps / 8 / 5000);
}

// One shared buffer per (worker, switch), sized in proportion to the ports of
// the switch the worker owns; then each port's traffic manager.
void create_traffic_managers(Runtime& rt) {
  for (auto& w : rt.workers) {
    w->buffers.resize(rt.switches.size());
    for (SwitchRuntime& sw : rt.switches) {
      size_t owned = 0;
      for (uint16_t p : sw.ports) owned += rt.ports[p]->owner_slot == w->slot;
      if (owned == 0) continue;
      const uint64_t size = sw.cfg->buffer.size_bytes * owned / sw.ports.size();
      w->buffers[sw.index] = std::make_unique<SharedBuffer>(size, sw.cfg->buffer.dt_alpha);
    }
  }
  for (auto& p : rt.ports) {
    const SwitchConfig& sc = *rt.switches[p->switch_index].cfg;
    EgressPortConfig ec;
    ec.num_queues = sc.tm.queues_per_port + (sc.tm.reply_queue ? 1 : 0);
    ec.priority_last = sc.tm.reply_queue;
    if (sc.tm.reply_queue) p->reply_queue = static_cast<uint8_t>(sc.tm.queues_per_port);
    ec.queue_capacity = sc.tm.queue_capacity_packets;
    ec.scheduler = sc.tm.scheduler;
    ec.drr_quantum_bytes = sc.tm.drr_quantum_bytes;
    // An internal link paces itself (LinkTiming, and its FIFO bounds what it
    // takes): a shaper too would only add a second, burstier clock.
    ec.rate_bps = p->kind == PortKind::kLink ? 0 : p->cfg->rate_bps;
    // Exact time is never late, so it needs no catch-up: one frame at a
    // time, as a real port sends, and room for one ns of line rate: a frame
    // starts at its due time rounded up to the ns, and the bucket must keep
    // that fraction for the next frame, or every frame at 100 Gb/s would
    // take a whole ns too many (1094-byte frames 88 ns apart, not 87.52).
    const uint64_t burst =
        rt.config.clock.mode == ClockMode::kExact
            ? std::max<uint64_t>(1, (p->cfg->rate_bps + 7'999'999'999) / 8'000'000'000)
            : default_burst(p->cfg->rate_bps);
    ec.burst_bytes = p->cfg->shaper_burst_bytes != 0 ? p->cfg->shaper_burst_bytes : burst;
    ec.wire_overhead_bytes = p->cfg->wire_overhead_bytes;
    // None on a TCD switch (TCD marks at departure); else the port's own or the switch's.
    ec.ecn = enqueue_ecn_config(sc, *p->cfg);
    ec.rng_seed = derive_seed(rt.config.seed, SeedStream::kRed, p->index);
    ec.queueing = port_queueing(sc.tm, *p->cfg);
    ec.mtu_bytes = p->cfg->mtu;
    if (ec.queueing.kind != QueueingKind::kClass) {
      SwitchRuntime& sw = rt.switches[p->switch_index];
      sw.flow_hash = sw.ingress_meta = true;  // forward keeps the 64-bit flow hash
    }
    SharedBuffer* buf = rt.workers[p->owner_slot]->buffers[p->switch_index].get();
    p->tm = std::make_unique<EgressPort>(ec, buf);
  }
}

// Frames one lcore builds to leave another's port cross on the owner's
// control ring, where a module's build asked for them (BFC, Floodgate).
std::string create_control_rings(Runtime& rt) {
  if (!rt.control_rings) return "";
  for (auto& w : rt.workers) {
    const std::string name = "sluice_c" + std::to_string(w->slot);
    w->control_in = rte_ring_create(name.c_str(), kControlRingSlots,
                                    static_cast<int>(rte_socket_id()), RING_F_SC_DEQ);
    if (w->control_in == nullptr)
      return "cannot create ring " + name + ": " + rte_strerror(rte_errno);
  }
  return "";
}

// A share's frames are routed on its own lcore, so no module may take a
// forward step on the port (the configuration's check refuses those,
// SwitchSection::receive_on_owner; this holds it for every module).
std::string check_receive_shares(const Runtime& rt) {
  const uint8_t forward_steps = forward_step_modules();
  for (const auto& w : rt.workers) {
    for (const RxShare& share : w->receive) {
      const PortRuntime& p = *rt.ports[share.port];
      if ((p.in_steps & forward_steps) != 0)
        return "workers: " + port_ref(*rt.switches[p.switch_index].cfg, *p.cfg) +
               ": a module takes a forward step on it, so its owner alone receives it";
    }
  }
  return "";
}

}  // namespace

// Each switch's shards: the lcores that own its ports, ranked by slot.
void number_shards(Runtime& rt) {
  for (SwitchRuntime& sw : rt.switches) {
    sw.shard_of_slot.assign(rt.workers.size(), 0);
    std::vector<uint8_t> owns(rt.workers.size(), 0);
    for (uint16_t p : sw.ports) owns[rt.ports[p]->owner_slot] = 1;
    uint8_t rank = 0;
    for (size_t slot = 0; slot < owns.size(); ++slot) {
      if (owns[slot]) sw.shard_of_slot[slot] = rank++;
    }
  }
}

// The emulator on several worker lcores: whole switches on each, and the
// windows they run in no longer than the lookahead of the links between
// them (lib/emulator/partition.h).
std::string check_exact_clock(Runtime& rt) {
  if (!exact_time(rt) || rt.workers.size() <= 1) return "";
  std::vector<unsigned> slots;
  for (const auto& p : rt.ports) slots.push_back(p->owner_slot);
  const PartitionCheck c = check_partition(rt.config, slots);
  if (!c.error.empty()) return "workers: " + c.error;
  // No link crosses: the lcores never wait on each other, but still meet
  // (a window then spans whatever is due next).
  const uint64_t lookahead = c.lookahead_ns == UINT64_MAX ? UINT64_MAX / 2 : c.lookahead_ns;
  rt.window_sync =
      std::make_unique<WindowSync>(static_cast<unsigned>(rt.workers.size()), lookahead);
  return "";
}

std::string build_runtime(Runtime& rt) {
  std::string err = supply_on_socket(rt, rte_socket_id(), &rt.mbufs);
  if (!err.empty()) return err;
  rt.switches.resize(rt.config.switches.size());
  for (size_t i = 0; i < rt.switches.size(); ++i) {
    SwitchRuntime& sw = rt.switches[i];
    sw.cfg = &rt.config.switches[i];
    sw.index = static_cast<uint16_t>(i);
    const TrafficManagerConfig& tm = sw.cfg->tm;
    sw.queues_per_port = static_cast<uint16_t>(tm.queues_per_port);
    sw.dscp_classes = tm.class_mapping == ClassMapping::kDscp;
    sw.reply_queue = tm.reply_queue;
    // Symmetric: every switch takes the first switch's salt, so a reply
    // picks the member index its request picked.
    const bool symmetric = rt.config.ecmp_hash == EcmpHashing::kSymmetric;
    rt.switches[i].symmetric_hash = symmetric;
    rt.switches[i].ecmp_salt = derive_seed(rt.config.seed, SeedStream::kEcmp, symmetric ? 0 : i);
  }
  err = create_ports(rt);
  if (err.empty()) err = create_links(rt);
  if (err.empty()) err = assign_workers(rt);
  if (err.empty()) number_shards(rt);
  if (err.empty()) err = check_exact_clock(rt);
  if (err.empty()) err = create_rings(rt);
  for (SwitchRuntime& sw : rt.switches) {
    if (err.empty()) err = create_routes(sw, exact_time(rt));
  }
  if (err.empty()) create_traffic_managers(rt);
  // Each module's state, in the registry's order, once the traffic
  // managers and shared buffers exist.
  Modules::each_type([&]<class M>() {
    if constexpr (requires { M::build(rt); })
      if (err.empty()) err = M::build(rt);
  });
  if (err.empty()) err = check_receive_shares(rt);
  if (err.empty()) err = create_control_rings(rt);
  for (auto& p : rt.ports) p->plan = plan_stages(*rt.switches[p->switch_index].cfg, *p->cfg);
  return err;
}

namespace {

bool is_memif_port(uint16_t eth_port) {
  rte_eth_dev_info info{};
  return rte_eth_dev_info_get(eth_port, &info) == 0 && info.driver_name != nullptr &&
         std::strcmp(info.driver_name, "net_memif") == 0;
}

bool has_memif_port(const Runtime& rt) {
  return std::any_of(rt.ports.begin(), rt.ports.end(), [](const auto& p) {
    return p->eth_port != kNoEthPort && is_memif_port(p->eth_port);
  });
}

}  // namespace

void release_runtime(Runtime& rt, std::chrono::steady_clock::time_point halted) {
  if (has_memif_port(rt)) std::this_thread::sleep_until(halted + kMemifCloseGrace);
  for (const auto& p : rt.ports) {
    if (p->eth_port == kNoEthPort) continue;
    const uint16_t port = p->eth_port;
    if (!is_memif_port(port)) {
      rte_eth_dev_stop(port);
      rte_eth_dev_close(port);
      continue;
    }
    stop_and_close_on_interrupt_thread(port);
  }
  for (SwitchRuntime& sw : rt.switches) rte_lpm_free(sw.lpm);
  for (auto& w : rt.workers) {
    for (rte_ring* r : w->to) rte_ring_free(r);
    rte_ring_free(w->control_in);
  }
  Modules::each_type([&]<class M>() {
    if constexpr (requires { M::release(rt); }) M::release(rt);
  });
}

}  // namespace sluice
