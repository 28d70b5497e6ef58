// What a frame carries in its mbuf across a hop: the metadata and an
// internal link's due time share the hash field (switch/path/mbuf_meta.h).
#include "switch/path/mbuf_meta.h"

#include <gtest/gtest.h>

#include <cstdint>
#include <cstring>
#include <vector>

namespace sluice {
namespace {

rte_mbuf blank() {
  rte_mbuf m;
  std::memset(&m, 0, sizeof m);
  return m;
}

// The receiver restores the full due time from its own time, for any due
// within 2^31 - 1 ns before or after it, across the 32-bit boundaries.
TEST(MbufDue, RestoresTheDueTimeNearTheReceiversTime) {
  rte_mbuf m = blank();
  const int64_t kReach = (int64_t{1} << 31) - 1;
  const std::vector<uint64_t> nows = {kReach + 1, uint64_t{1} << 32, (uint64_t{1} << 32) - 1,
                                      (uint64_t{5} << 32) + 17, (uint64_t{1} << 44) - 1};
  const std::vector<int64_t> offsets = {0,         1,          -1,     999,    -999,
                                        1'000'000, -1'000'000, kReach, -kReach};
  for (const uint64_t now : nows) {
    for (const int64_t off : offsets) {
      const uint64_t due = now + static_cast<uint64_t>(off);
      mbuf_due_set(&m, due);
      EXPECT_EQ(mbuf_due_get(&m, now), due) << "now " << now << " offset " << off;
    }
  }
}

// Neither overwrites the other.
TEST(MbufDue, LeavesTheMetadataAlone) {
  rte_mbuf m = blank();
  const MbufMeta meta{513, 18, 5, true, false, true};
  mbuf_meta_set(&m, meta);
  mbuf_due_set(&m, 123'456'789'012);
  const MbufMeta got = mbuf_meta_get(&m);
  EXPECT_EQ(got.egress_port, 513);
  EXPECT_EQ(got.l3_offset, 18);
  EXPECT_EQ(got.queue, 5);
  EXPECT_TRUE(got.ecn_capable);
  EXPECT_FALSE(got.detour);
  EXPECT_TRUE(got.has_detours);
  mbuf_meta_set(&m, MbufMeta{7, 14, 0, false, true, false});
  EXPECT_EQ(mbuf_due_get(&m, 123'456'000'000), 123'456'789'012u);
}

}  // namespace
}  // namespace sluice
