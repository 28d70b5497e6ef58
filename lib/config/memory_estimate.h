#pragma once
// What a configuration needs of DPDK's memory (the -m of EAL, or its
// hugepages): the mbuf pool, a routing table per switch, the rings between
// lcores, and EAL's own. sluice says it before
// it starts (--check prints it) and refuses to start with less, naming the
// parts, instead of failing halfway through start-up. Process memory (the
// traffic managers' queue rings, the internal links' rings, BFC and
// Floodgate tables) is not DPDK's and is not counted here. The sizes follow DPDK 22.11's layouts; the
// estimate is meant to be a little above what start-up takes.

#include <cstdint>
#include <string>

#include "lib/config/config.h"

namespace sluice {

// rte_lpm per switch: the 2^24-entry first level (4 bytes each, 64 MiB)
// whatever the routes, the second-level groups, and the rules.
constexpr uint32_t kLpmTbl8Groups = 256;
uint32_t lpm_max_rules(const SwitchConfig& sw);
// Slots of each ring from one lcore to another, and of each lcore's ring
// of control frames other lcores send out of its ports.
constexpr uint32_t kWorkerRingSlots = 4096;
constexpr uint32_t kControlRingSlots = 1024;

struct MemoryEstimate {
  uint64_t mbuf_pool = 0;  // mbufs x (mbuf_size + headroom + headers); see frames_in_process
  uint64_t routing = 0;    // one rte_lpm per switch
  uint64_t rings = 0;      // lcore-to-lcore, control
  uint64_t eal = 0;        // EAL's own memzones, telemetry, slack
  uint32_t switches = 0;
  bool frames_in_process = false;  // fabric time: mbuf_pool is the pools' EAL part only
  uint64_t total() const { return mbuf_pool + routing + rings + eal; }
  // "mbuf pool 257 MiB, routing tables 257 MiB (4 switches x 64 MiB), rings
  // 1 MiB, EAL 64 MiB", for --check's "DPDK memory: about N MiB (...)".
  std::string parts() const;
};

// `workers`: the worker lcores the process will run (ring count).
MemoryEstimate estimate_dpdk_memory(const Config& c, uint32_t workers = 1);

// Whole MiB, rounded up.
constexpr uint64_t mib_up(uint64_t bytes) { return (bytes + (1u << 20) - 1) >> 20; }

}  // namespace sluice
