#pragma once
// The ordinary admission test as DIBS asks it of a candidate port
// (SPEC 4.3: dynamic-threshold share and queue capacity for this packet's
// size), without enqueueing anything:
//
//   detour_admits      exact, for a port this lcore owns: what
//                      EgressPort::enqueue would decide for `bytes` in
//                      `queue` now, and no pause on that queue or port;
//   detour_room_bytes  for the owner's PortSnapshot: the largest packet
//                      every data queue of the port would admit now, so a
//                      reader need not know the packet's queue. With
//                      class_map fifo only queue 0 holds data and this is
//                      exactly queue 0's room; with dscp it is the room of
//                      the fullest queue (conservative).
//
// A paused queue does not admit a detour: it would hold the packet in this
// switch, whose buffer the detour is meant to relieve. (A DIBS switch has no
// PFC, PAUSE or BFC, so nothing pauses its queues today; docs/mechanisms/
// dibs.md, "Paused ports".)

#include <cstdint>

#include "lib/mechanisms/dibs/port_snapshot.h"
#include "lib/tm/egress_port.h"

namespace sluice {

inline bool detour_admits(const EgressPort& port, uint16_t queue, uint32_t bytes, uint64_t now_ns) {
  if (port.port_paused(now_ns) || port.queue_paused(queue, now_ns)) return false;
  if (port.queue(queue).full()) return false;
  DropReason why;
  return port.buffer().admits(port.queue_bytes(queue), bytes, &why);
}

// Scans the data queues: once per loop iteration per published port, not
// per packet.
uint64_t detour_room_bytes(const EgressPort& port, uint64_t now_ns);

// The owner's publication of `port` into *out.
inline void publish_snapshot(const EgressPort& port, uint64_t now_ns, uint64_t handed_bytes,
                             PortSnapshot* out) {
  out->publish(port.data_queued_bytes(), detour_room_bytes(port, now_ns), handed_bytes);
}

}  // namespace sluice
