#pragma once
// One end of an internal link between switch instances of one process. A
// direction is a LinkRing (lib/emulator/link/link_ring.h) from the sending
// port's owner lcore to the receiving port's owner; each frame goes with
// its due time (LinkTiming) in its ring slot and is handed to the receiver
// no earlier than that, in order.

#include <rte_mbuf.h>

#include <cstdint>

#include "lib/tm/egress_port.h"
#include "lib/tm/latency_histogram.h"
#include "switch/ports/port_medium.h"
#include "switch/runtime/runtime.h"

namespace sluice {

class alignas(64) LinkMedium final : public PortMedium {
 public:
  // out: the direction this port sends into; in: the one it receives from.
  LinkMedium(LinkDirection& out, LinkDirection& in, uint32_t mtu) : in_(in), out_(out), mtu_(mtu) {}

  // How late deliveries were against their due times (real time; in exact
  // time every sample is 0): PortRuntime::link_lateness points here.
  const LatencyHistogram& lateness() const { return lateness_; }

  unsigned receive(uint64_t now, rte_mbuf** pkts, unsigned n) override;
  unsigned send(uint64_t now, rte_mbuf** pkts, unsigned n, SendNotes* notes) override;
  void begin_transmit(uint64_t now, bool exact, EgressPort& tm) override;
  unsigned room(uint64_t now, bool exact) override;
  void scheduled(uint64_t now, const EgressPort& tm) override {
    waiting_ = tm.next_event_ns(now) <= now;
  }
  uint64_t next_rx_ns(uint64_t now) override;
  const rte_mbuf* next_frame(const char**) const override {
    const LinkSlot* s = in_.ring.known_front();
    return s != nullptr ? static_cast<const rte_mbuf*>(s->frame) : nullptr;
  }
  uint32_t discard_in_flight() override;

 private:
  // In exact time a receive and a send each touch only the object's first
  // line, with its vtable pointer: the directions, where this send's frames
  // start, and the lateness histogram's totals and first buckets (an
  // on-time frame writes those). Real time's pacing fields come after.
  LinkDirection& in_;
  LinkDirection& out_;
  // When this call's frames start on the wire (earlier than now while the
  // wire catches up after a late loop).
  uint64_t tx_ns_ = 0;
  LatencyHistogram lateness_;
  uint32_t mtu_;
  // Frames could leave at the last transmit call, and when that was.
  bool waiting_ = false;
  uint64_t checked_ns_ = 0;
};

}  // namespace sluice
