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
  // `handed_bytes`: the detours other lcores sent here that the owner has
  // taken off its ring so far (admitted or refused), all counted in
  // queued_bytes and room_bytes already.
  void publish(uint64_t queued_bytes, uint64_t room_bytes, uint64_t handed_bytes) {
    queued_.store(queued_bytes, std::memory_order_relaxed);
    room_.store(room_bytes, std::memory_order_relaxed);
    handed_.store(handed_bytes, std::memory_order_relaxed);
  }
  // Any lcore. The values may come from neighbouring publications.
  uint64_t queued_bytes() const { return queued_.load(std::memory_order_relaxed); }
  // The largest packet the port's data queues all admitted when published.
  uint64_t room_bytes() const { return room_.load(std::memory_order_relaxed); }
  uint64_t handed_bytes() const { return handed_.load(std::memory_order_relaxed); }
  bool admits(uint32_t bytes) const { return bytes <= room_bytes(); }

 private:
  std::atomic<uint64_t> queued_{0};
  std::atomic<uint64_t> room_{0};  // nothing admitted before the first publication
  std::atomic<uint64_t> handed_{0};
};

// One reader lcore's detours toward a port: those still on their way (sent,
// not yet counted in the snapshot) take room the snapshot still shows, so
// a burst of refusals is not all handed the same room. Exact with one
// reader; with several, each sees the others' detours only once taken (the
// owner's count covers everyone's, so a reader may underestimate what is
// on its way). Single writer (the reader).
class SnapshotClaims {
 public:
  bool admits(const PortSnapshot& s, uint32_t bytes) const {
    const uint64_t handed = s.handed_bytes();
    const uint64_t on_way = sent_ > handed ? sent_ - handed : 0;
    return on_way + bytes <= s.room_bytes();
  }
  void claim(uint32_t bytes) { sent_ += bytes; }

 private:
  uint64_t sent_ = 0;
};

}  // namespace sluice
