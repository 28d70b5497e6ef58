#pragma once
// A port on a DPDK ethdev (a NIC, or a virtual device: net_null, net_pcap,
// net_ring, net_memif, net_af_packet): rx queue 0 and the one tx queue,
// polled by the port's owner lcore; or another rx queue of it, polled by a
// worker that receives a share of the port (workers[].receive).

#include <rte_ethdev.h>

#include "switch/ports/port_medium.h"

namespace sluice {

class EthdevMedium final : public PortMedium {
 public:
  explicit EthdevMedium(uint16_t eth_port, uint16_t rx_queue = 0)
      : port_(eth_port), rx_queue_(rx_queue) {}
  unsigned receive(uint64_t, rte_mbuf** pkts, unsigned n) override {
    return rte_eth_rx_burst(port_, rx_queue_, pkts, static_cast<uint16_t>(n));
  }
  unsigned send(uint64_t, rte_mbuf** pkts, unsigned n, SendNotes*) override {
    return rte_eth_tx_burst(port_, 0, pkts, static_cast<uint16_t>(n));
  }

 private:
  uint16_t port_;
  uint16_t rx_queue_;
};

}  // namespace sluice
