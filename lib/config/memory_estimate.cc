#include "lib/config/memory_estimate.h"


namespace sluice {
namespace {

constexpr uint64_t kLpmTbl24Bytes = (uint64_t{1} << 24) * 4;
constexpr uint64_t kLpmTbl8Bytes = 256 * 4;
constexpr uint64_t kLpmRuleBytes = 8;
// A pool element: the rte_mbuf (two cache lines), its headroom (128), the
// frame room, and the mempool's object header, cache-line aligned. Without
// hugepages EAL's memory is 4 KiB pages and the pool puts no object across
// a page boundary it can avoid: a 2 KiB mbuf (2,368 bytes) takes a whole
// page (measured: conf/fabrics/bfc-leafspine.yaml's 242,688 mbufs took
// about 3.8 KiB each). The estimate takes that case, the larger.
constexpr uint64_t kMbufOverheadBytes = 128 + 128 + 64;
constexpr uint64_t kSmallPageBytes = 4096;
constexpr uint64_t kRingSlotBytes = 8;
// In fabric time a pool's frames are in process memory; EAL holds its ring
// (16,384 mbufs: 32,768 slots) and its header with a cache per possible
// lcore (RTE_MAX_LCORE of 8 KiB and more): about 1.3 MiB, taken as 1.5.
constexpr uint64_t kFabricPoolMbufs = 16'384;  // MbufSupply::kEmulatorChunk
constexpr uint64_t kFabricPoolBytes = uint64_t{3} << 19;
// EAL's memzones (the memseg lists, telemetry, pdump), the pool's per-lcore
// caches, and slack for the heap's fragmentation (measured: under 60 MiB
// with --no-huge on Debian's DPDK 22.11).
constexpr uint64_t kEalBytes = uint64_t{64} << 20;

uint64_t round_up(uint64_t v, uint64_t to) { return (v + to - 1) / to * to; }

}  // namespace

uint32_t lpm_max_rules(const SwitchConfig& sw) {
  return static_cast<uint32_t>(sw.routes.size() + 2 * sw.ports.size() + 16);
}

MemoryEstimate estimate_dpdk_memory(const Config& c, uint32_t workers) {
  MemoryEstimate e;
  // The emulator's switches route with a PrefixTable, in the process's own
  // memory (a few KiB each), not DPDK's; its frames are in process memory
  // too (switch/runtime/mbuf_supply.h).
  const bool lpm = c.clock.mode != ClockMode::kExact;
  e.frames_in_process = !lpm;
  e.mbuf_pool = lpm ? uint64_t{c.mbufs} *
                          round_up(c.mbuf_size + kMbufOverheadBytes, kSmallPageBytes)
                    : (uint64_t{c.mbufs} + kFabricPoolMbufs - 1) / kFabricPoolMbufs *
                          kFabricPoolBytes;
  for (const SwitchConfig& sw : c.switches) {
    ++e.switches;
    if (lpm)
      e.routing +=
          kLpmTbl24Bytes + kLpmTbl8Groups * kLpmTbl8Bytes + lpm_max_rules(sw) * kLpmRuleBytes;
  }
  e.rings += uint64_t{workers} * (uint64_t{workers} * kWorkerRingSlots + kControlRingSlots) *
             kRingSlotBytes;
  e.eal = kEalBytes;
  return e;
}

std::string MemoryEstimate::parts() const {
  const std::string tables =
      routing == 0 ? "routing tables in process memory"
                   : "routing tables " + std::to_string(mib_up(routing)) + " MiB (" +
                         std::to_string(switches) + " switches x 64 MiB)";
  const std::string pools =
      frames_in_process ? "mbuf pools " + std::to_string(mib_up(mbuf_pool)) +
                              " MiB (their frames in process memory, as the fabric holds them)"
                        : "mbuf pool " + std::to_string(mib_up(mbuf_pool)) + " MiB";
  return pools + ", " + tables + ", rings " +
         std::to_string(mib_up(rings)) + " MiB, EAL " + std::to_string(mib_up(eal)) + " MiB";
}

}  // namespace sluice
