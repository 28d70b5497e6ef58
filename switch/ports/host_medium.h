#pragma once
// An emulated host on a port (docs/emulator.md, "Emulated hosts"): a
// capture-file port whose NIC replays a capture, or runs transports on a
// flow list, and writes what reaches it to a capture (pcap_port.h). What
// the port sends toward the host is stamped when its last bit would reach
// the host: after the port's serialisation and, in exact time, the host
// link's delay (`wire`).

#include <memory>

#include "lib/emulator/link/link_timing.h"
#include "switch/ports/pcap_port.h"
#include "switch/ports/port_medium.h"

namespace sluice {

class HostMedium final : public PortMedium {
 public:
  HostMedium(std::unique_ptr<PcapPort> host, std::unique_ptr<LinkTiming> wire)
      : host_(std::move(host)), wire_(std::move(wire)) {}

  unsigned receive(uint64_t now, rte_mbuf** pkts, unsigned n) override {
    return host_->rx_burst(now, pkts, static_cast<uint16_t>(n));
  }
  unsigned send(uint64_t now, rte_mbuf** pkts, unsigned n, SendNotes*) override {
    uint64_t stamps[kMaxBurst];
    for (unsigned i = 0; i < n; ++i) stamps[i] = wire_->depart(now, pkts[i]->pkt_len);
    return host_->tx_burst_at(stamps, pkts, static_cast<uint16_t>(n));
  }
  uint64_t next_rx_ns(uint64_t now) override { return host_->next_rx_ns(now); }
  const rte_mbuf* next_frame(const char** state) const override { return host_->next_frame(state); }
  bool answers() const override { return true; }
  uint32_t discard_in_flight() override { return host_->discard_link(); }
  void finish(uint64_t end_ns) override { host_->settle_gauges(end_ns); }

  PcapPort& host() { return *host_; }

 private:
  std::unique_ptr<PcapPort> host_;
  std::unique_ptr<LinkTiming> wire_;
};

}  // namespace sluice
