#pragma once
// What handling a port touches first, for the loop to ask for before it
// needs it (fabric_loop.h): a large fabric's loop waits on memory, and a
// port last touched thousands of events ago is cold. One cache line per
// port, in a dense array rather than in the port's own objects, so that
// finding the lines costs at most one miss: the bases of the port's
// objects, and the frame that arrives next.
//
// Which lines are asked for is a trade: a core tracks only some twenty
// misses at once, and asking for every line a port might touch (14, the
// earlier list) stalled the loop on the prefetches themselves. Measured in
// docs/benchmarks.md ("Asking for the frame").

#include <rte_prefetch.h>

#include <cstdint>

struct rte_mbuf;

namespace sluice {

struct alignas(64) PortLines {
  const char* runtime = nullptr;   // PortRuntime: its first line
  const char* tm = nullptr;        // EgressPort: its first two lines
  const char* counters = nullptr;  // PortCounters: the per-packet line
  const char* medium = nullptr;    // the port's medium: its first line
  const char* link_out = nullptr;  // the link direction it sends into: its timing and ring
  // What its arrivals read first beyond the port: the ring's line of the
  // link it receives from, or an emulated host's next delivery to its
  // transport (kept current by PortElement::due).
  const char* rx_state = nullptr;
  const char* element = nullptr;  // its PortElement
  // The mbuf of the frame that arrives next, when known (nullptr: none).
  // Written a link's delay ago, it has left the caches since.
  const rte_mbuf* frame = nullptr;
};

// DPDK's prefetch (an asm statement), not __builtin_prefetch: GCC 12 deems
// a function of builtin prefetches alone free of effects and drops its
// calls.

// The port is handled next (the loop's next element): what an arrival
// reads first.
inline void prefetch_for_arrival(const PortLines& l, uint32_t frame_data) {
  rte_prefetch0(l.runtime);
  rte_prefetch0(l.medium);
  rte_prefetch0(l.rx_state);
  rte_prefetch0(l.element);
  if (l.frame != nullptr) {
    const char* m = reinterpret_cast<const char*>(l.frame);
    rte_prefetch0(m);               // its length, metadata and due time
    rte_prefetch0(m + frame_data);  // the headers the parse reads
  }
}

// Where in a traffic manager a pass reads beyond its first two lines
// (EgressPort::scheduler_line, pass_line): the same for every port.
struct PassLines {
  uint32_t scheduler = 0;
  uint32_t pass = 0;
};

// A packet is about to be admitted to the port: what admission and an
// immediate send (or a pass straight through) read first.
inline void prefetch_for_admission(const PortLines& l, PassLines pass) {
  rte_prefetch0(l.runtime);
  rte_prefetch0(l.tm);
  rte_prefetch0(l.tm + 64);
  rte_prefetch0(l.tm + pass.scheduler);
  rte_prefetch0(l.tm + pass.pass);
  rte_prefetch0(l.counters);
  rte_prefetch0(l.link_out);
}

}  // namespace sluice
