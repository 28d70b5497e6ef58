#include "switch/emulator/port_element.h"

#include <cinttypes>
#include <cstddef>
#include <cstdio>

#include "switch/emulator/fabric_loop.h"
#include "switch/path/worker.h"

namespace sluice {

PortElement::PortElement(Worker& w, PortRuntime& port) : w_(w), port_(port) {}

const char* PortElement::name() const { return port_.cfg->name.c_str(); }

void PortElement::describe(char* out, unsigned size) const {
  std::snprintf(out, size,
                "its parts were due rx %" PRIu64 " tx %" PRIu64 " misc %" PRIu64
                "; %u frames pending",
                rx_, tx_, misc_, port_.tx_pending_count);
}

uint64_t PortElement::due_fresh(uint64_t now) {
  return std::min({rx_due(now), wire_due(now), misc_due(now)});
}

// Each part that is due: its arrivals, its wire, its timers. A part that
// ran is asked again, and so is what it reaches on this port: a frame sent
// to an emulated host acts on its NIC (PAUSE, BFC, dstPause); the modules
// say which of their parts a received or sent frame moved (TCD sees a
// pause the instant it is received). What a part does to other parts by
// rule (a PAUSE received holds this port's wire, PFC bytes counted against
// it, an ARP reply) touches them where it happens.
uint8_t PortElement::run(uint64_t now) {
  uint8_t again = 0;
  if (rx_ <= now) {
    w_.poll_port(port_, now);
    again |= FabricLoop::kRx;
    w_.each_module([&](auto& m) {
      if constexpr (requires { m.port_received(port_, now); }) again |= m.port_received(port_, now);
    });
  }
  if (tx_ <= now) {
    w_.transmit(port_, now);
    again |= FabricLoop::kTx;
    if (port_.medium->answers()) again |= FabricLoop::kRx;
    w_.each_module([&](auto& m) {
      if constexpr (requires { m.port_transmitted(port_); }) again |= m.port_transmitted(port_);
    });
  }
  if (misc_ <= now) {
    w_.each_module([&](auto& m) {
      if constexpr (requires { m.port_timers(port_, now); }) m.port_timers(port_, now);
    });
    w_.send_arp_requests(port_, now);
    again |= FabricLoop::kMisc;
  }
  if (again & (FabricLoop::kRx | FabricLoop::kTx)) {
    w_.each_module([&](auto& m) {
      if constexpr (requires { m.port_moved(port_); }) m.port_moved(port_);
    });
  }
  return again;
}

uint64_t PortElement::misc_due(uint64_t now) {
  uint64_t due = kNever;
  w_.each_module([&](auto& m) {
    if constexpr (requires { m.port_timers_due(port_, now); })
      due = std::min(due, m.port_timers_due(port_, now));
  });
  if (!port_.eth_header_ready && port_.cfg->peer_ipv4 && port_.cfg->ipv4)
    due = std::min(due, port_.next_arp_request_ns);
  return due == kNever ? due : std::max(due, now);
}

}  // namespace sluice
