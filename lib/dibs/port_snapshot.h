#pragma once
// What a port's owner lcore tells the other lcores about the port, for
// their DIBS choices (docs/mechanisms/dibs.md, "Across lcores").
//
// Only the owner may write a port's traffic manager, yet a packet refused
// on one lcore may be best detoured out of a port another lcore owns. So
// each owner publishes, once per loop iteration, the queued bytes and the
// room of each switch-facing port it owns, in relaxed atomics that it alone
// writes; a deciding lcore reads them, chooses, and hands the packet to the
// owner over the existing ring, where the ordinary admission runs again
// (a refusal there is a drop counted as detour_refused).
//
// The approximation: what a reader sees is as old as the owner's last loop
// iteration (plus the time the packet waits in the ring), and several
// lcores may pick the same port from one snapshot. A port may look open
// and refuse (detour_refused), or look full and have room (the packet goes
// to another port, or is dropped as detour_no_port).
//
// One cache line each, so owners publishing neighbouring ports of one
// array do not contend for a line.

#include <atomic>
#include <cstdint>

namespace sluice {

class alignas(64) PortSnapshot {
 public:
  // Owner only.
  void publish(uint64_t queued_bytes, uint64_t room_bytes) {
    queued_.store(queued_bytes, std::memory_order_relaxed);
    room_.store(room_bytes, std::memory_order_relaxed);
  }

  // Any lcore. The two values may come from neighbouring publications.
  uint64_t queued_bytes() const { return queued_.load(std::memory_order_relaxed); }
  // The largest packet the port's data queues all admitted when published.
  uint64_t room_bytes() const { return room_.load(std::memory_order_relaxed); }
  bool admits(uint32_t bytes) const { return bytes <= room_bytes(); }

 private:
  std::atomic<uint64_t> queued_{0};
  std::atomic<uint64_t> room_{0};  // nothing admitted before the first publication
};

}  // namespace sluice
