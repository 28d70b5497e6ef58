#pragma once
// The emulator on several worker lcores (docs/emulator.md, "Several
// lcores"): the switches, each whole with its ports (and so its emulated
// hosts), are partitioned over the lcores; only internal links cross from
// one lcore to another. The lookahead of a partition is the shortest time in
// which anything one lcore does can reach another: over a link, its
// propagation delay plus the serialisation of the smallest frame (no bytes
// but the wire's overhead). The
// lcores run in windows of fabric time no longer than that, so nothing an
// lcore does in a window can reach another before the window ends.

#include <cstdint>
#include <string>
#include <vector>

#include "lib/config/config.h"

namespace sluice {

// A window shorter than this does too little work to pay for the lcores
// meeting at its end (docs/emulator.md, "Several lcores"): a partition
// whose lookahead would be shorter is refused.
inline constexpr uint64_t kMinLookaheadNs = 100;

// The worker slot of every port (configuration order, switch by switch):
// whole switches in configuration order cut into `workers` runs of about
// equal port counts, Flowtune's edge switches all on the first (the
// allocator in the fabric talks to every edge with no link between them).
std::vector<unsigned> emulator_partition(const Config& config, unsigned workers);

// The worker slot of every port as the `workers:` section places them (the
// n-th entry is slot n); empty with *error naming a port placed twice or
// never, or one that does not exist.
std::vector<unsigned> partition_of_workers(const Config& config, std::string* error);

struct PartitionCheck {
  std::string error;  // empty: the partition is sound
  uint64_t lookahead_ns = UINT64_MAX;  // UINT64_MAX: no link crosses lcores
  uint32_t cross_links = 0;            // directions of links that cross
};

// Whether `slots` (a worker slot per port, configuration order) keeps
// every switch whole, Flowtune's edges and allocator together, and every
// link that crosses lcores no shorter than kMinLookaheadNs (naming the
// first that is not); and the lookahead.
PartitionCheck check_partition(const Config& config, const std::vector<unsigned>& slots);

}  // namespace sluice
