#pragma once
// A port on a DPDK ethdev (a NIC, or a virtual device: net_null, net_pcap,
// net_ring, net_memif, net_af_packet): one rx and one tx queue, polled by
// the port's owner lcore.

#include <rte_ethdev.h>

#include "switch/ports/port_medium.h"

namespace sluice {

class EthdevMedium final : public PortMedium {
 public:
  explicit EthdevMedium(uint16_t eth_port) : port_(eth_port) {}
  unsigned receive(uint64_t, rte_mbuf** pkts, unsigned n) override {
    return rte_eth_rx_burst(port_, 0, pkts, static_cast<uint16_t>(n));
  }
  unsigned send(uint64_t, rte_mbuf** pkts, unsigned n, SendNotes*) override {
    return rte_eth_tx_burst(port_, 0, pkts, static_cast<uint16_t>(n));
  }

 private:
  uint16_t port_;
};

}  // namespace sluice
