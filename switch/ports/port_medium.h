#pragma once
// What a port sends into and receives from (docs/architecture.md, "Ports"):
// a NIC (ethdev_medium.h), one end of an internal link (link_medium.h), or
// an emulated host, replaying a capture or running transports
// (host_medium.h). The worker's loop, the stages and the emulator's loop
// talk to every port through this and know none of them by kind.

#include <rte_mbuf.h>

#include <cstdint>

#include "lib/tm/tm_packet.h"

namespace sluice {

class EgressPort;

// What a send() did besides taking frames.
struct SendNotes {
  uint64_t lost = 0;  // frames taken and lost on the way (an internal link's configured loss)
  // Exact time: a frame reaches port `far_port` at `first_arrival` (the
  // first of those sent; UINT64_MAX: none reaches a port of this process).
  uint16_t far_port = 0;
  uint64_t first_arrival = UINT64_MAX;
  const rte_mbuf* first_frame = nullptr;  // that frame
  // In: the frames as the traffic manager handed them out, where they are
  // unchanged since (nullptr: the medium reads their lengths from them). A
  // frame the traffic manager held is cold by the time it leaves, and a
  // link needs only its length.
  const TmPacket* dequeued = nullptr;
};

class PortMedium {
 public:
  static constexpr uint64_t kNever = UINT64_MAX;
  virtual ~PortMedium() = default;

  // Up to n frames that have arrived by `now`.
  virtual unsigned receive(uint64_t now, rte_mbuf** pkts, unsigned n) = 0;
  // Hands frames over; returns how many the medium took (the rest stay
  // with the caller).
  virtual unsigned send(uint64_t now, rte_mbuf** pkts, unsigned n, SendNotes* notes) = 0;

  // A transmit begins at `now` (a link's frames start where its wire fell
  // free when the loop came back late); how many frames the wire takes now,
  // before the traffic manager is asked (a link commits serialisation only
  // so far ahead; in exact time one frame once its wire is free); and what
  // the traffic manager left queued once asked. `exact`: fabric time.
  virtual void begin_transmit(uint64_t now, bool exact, EgressPort& tm) {
    (void)now, (void)exact, (void)tm;
  }
  virtual unsigned room(uint64_t now, bool exact) {
    (void)now, (void)exact;
    return kMaxBurst;
  }
  virtual void scheduled(uint64_t now, const EgressPort& tm) { (void)now, (void)tm; }

  // Exact time: when a frame next arrives, or the medium next has something
  // to do on its own (an emulated host's NIC may send); kNever: not before
  // something is sent toward it.
  virtual uint64_t next_rx_ns(uint64_t now) {
    (void)now;
    return kNever;
  }
  // Exact time, after next_rx_ns: the frame that arrives next, if it is
  // known without reading anything cold (nullptr: none, or not known). A
  // hint: the loop asks for its memory before the port is handled. A
  // medium whose arrivals first read state of its own (an emulated host's
  // next delivery to its transport) points *state at it; others leave it.
  virtual const rte_mbuf* next_frame(const char** state) const {
    (void)state;
    return nullptr;
  }
  // What is sent toward it may change what it does next (an emulated
  // host's NIC obeys pauses and hands frames to its transports).
  virtual bool answers() const { return false; }

  // After the workers stopped: frees what is still on its way to this port
  // and returns how many frames that was.
  virtual uint32_t discard_in_flight() { return 0; }
  // The run ended at end_ns (gauges kept only then in exact time).
  virtual void finish(uint64_t end_ns) { (void)end_ns; }

  static constexpr unsigned kMaxBurst = 32;
};

}  // namespace sluice
