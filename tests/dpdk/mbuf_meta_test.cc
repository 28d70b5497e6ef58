// What a frame carries in its mbuf's hash field across a hop: the
// metadata, or a received frame's mark and ingress port
// (switch/path/mbuf_meta.h).
#include "switch/path/mbuf_meta.h"

#include <gtest/gtest.h>

#include <cstdint>
#include <cstring>

namespace sluice {
namespace {

rte_mbuf blank() {
  rte_mbuf m;
  std::memset(&m, 0, sizeof m);
  return m;
}

void expect_meta(const MbufMeta& got, const MbufMeta& want) {
  EXPECT_EQ(got.egress_port, want.egress_port);
  EXPECT_EQ(got.l3_offset, want.l3_offset);
  EXPECT_EQ(got.queue, want.queue);
  EXPECT_EQ(got.ecn_capable, want.ecn_capable);
  EXPECT_EQ(got.detour, want.detour);
  EXPECT_EQ(got.has_detours, want.has_detours);
}

// Every field comes back as it was set, at the ends of its range, and a
// second set replaces the first whole.
TEST(MbufMeta, RoundTripsEveryField) {
  rte_mbuf m = blank();
  for (const MbufMeta& want :
       {MbufMeta{513, 18, 5, true, false, true}, MbufMeta{0xFFFE, 127, 63, false, true, false},
        MbufMeta{0, 14, 0, false, false, false}}) {
    mbuf_meta_set(&m, want);
    expect_meta(mbuf_meta_get(&m), want);
    EXPECT_FALSE(mbuf_is_received(&m));
  }
}

// A received frame's mark is no metadata's, and keeps its ingress port.
TEST(MbufMeta, MarksAReceivedFrameWithItsPort) {
  rte_mbuf m = blank();
  mbuf_meta_set(&m, MbufMeta{7, 14, 0, false, false, false});
  EXPECT_FALSE(mbuf_is_received(&m));
  mbuf_mark_received(&m, 1023);
  EXPECT_TRUE(mbuf_is_received(&m));
  EXPECT_EQ(mbuf_received_port(&m), 1023);
}

}  // namespace
}  // namespace sluice
