#pragma once
// Where every random choice of the data path gets its seed: the
// configuration's `seed`, the rule that draws (a stream), and the element
// that owns the generator (a switch, a port, an lcore's shard). One seed
// therefore names a whole run: the same seed repeats it byte for byte, and
// another seed changes every stream at once (docs/configuration.md, "seed").

#include <cstdint>

#include "lib/net/flow_hash.h"

namespace sluice {

enum class SeedStream : uint64_t {
  kEcmp = 1,  // per switch: the ECMP and BFC flow-hash salt
  kLinkLoss,  // per link direction: which frames a lossy link drops
  kRed,       // per port: RED's marking coin
  kBfc,       // per BFC shard: the random queue when none is empty
  kDibs,      // per DIBS shard: the detour port
};

constexpr uint64_t derive_seed(uint64_t seed, SeedStream stream, uint64_t index) {
  return fmix64(fmix64(seed ^ (static_cast<uint64_t>(stream) << 56)) + index);
}

// A switch's flow hash under its salt: 64 well-mixed bits from the 5-tuple
// hash, the high half for ECMP (ecmp_pick), the low half for BFC's flow
// table. Salting per switch keeps two tiers of ECMP from choosing alike
// (a fat-tree's aggregation switch would otherwise see only the flows its
// edge already sent to it by the same bits, and use one core link).
constexpr uint64_t salted_flow_hash(uint32_t flow_hash, uint64_t salt) {
  return fmix64(uint64_t{flow_hash} ^ salt);
}

}  // namespace sluice
