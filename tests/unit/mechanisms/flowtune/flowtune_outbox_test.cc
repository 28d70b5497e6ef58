// What an edge tells the allocator: entries batched into datagrams that parse
// back to what went in, full datagrams sent as they fill, and never an END
// ahead of the START it follows.
#include "lib/mechanisms/flowtune/flowtune_outbox.h"

#include <gtest/gtest.h>

#include <cstdint>
#include <vector>

#include "lib/mechanisms/flowtune/flow_key.h"

namespace sluice {
namespace {

struct Sent {
  FlowtuneType type;
  std::vector<uint32_t> ids;
};

struct Recorder {
  std::vector<Sent> sent;
  void operator()(const uint8_t* p, uint32_t len) {
    FlowtuneMessage m;
    ASSERT_EQ(parse_flowtune(p, len, &m), FlowtuneParseResult::kOk);
    ASSERT_LE(len, kFlowtuneMtuPayload);
    Sent s{m.type, {}};
    for (uint32_t i = 0; i < m.count; ++i) {
      s.ids.push_back(m.type == FlowtuneType::kFlowletStart ? m.flowlet_start(i).flow_id
                                                            : m.flowlet_end(i).flow_id);
    }
    sent.push_back(s);
  }
};

TEST(FlowtuneOutbox, FlushSendsStartsThenEnds) {
  FlowtuneOutbox box;
  Recorder r;
  auto send = [&](const uint8_t* p, uint32_t len) { r(p, len); };
  box.start({7, 0x0A000001, 0x0A000002, 1}, send);
  box.end(5, send);
  box.start({8, 0x0A000001, 0x0A000003, 2}, send);
  EXPECT_TRUE(r.sent.empty());
  box.flush(send);
  ASSERT_EQ(r.sent.size(), 2u);
  EXPECT_EQ(r.sent[0].type, FlowtuneType::kFlowletStart);
  EXPECT_EQ(r.sent[0].ids, (std::vector<uint32_t>{7, 8}));
  EXPECT_EQ(r.sent[1].type, FlowtuneType::kFlowletEnd);
  EXPECT_EQ(r.sent[1].ids, (std::vector<uint32_t>{5}));
  EXPECT_TRUE(box.empty());
  box.flush(send);
  EXPECT_EQ(r.sent.size(), 2u);  // nothing pending, nothing sent
}

TEST(FlowtuneOutbox, FullDatagramsLeaveAsTheyFillAndEndsNeverOvertakeStarts) {
  FlowtuneOutbox box;
  Recorder r;
  auto send = [&](const uint8_t* p, uint32_t len) { r(p, len); };
  // One START pending, then enough ENDs to fill a datagram: the START
  // must leave before the first END datagram.
  box.start({1, 1, 2, 1}, send);
  for (uint32_t id = 100; id < 100 + FlowtuneOutbox::kMaxEnds + 1; ++id) box.end(id, send);
  ASSERT_EQ(r.sent.size(), 2u);
  EXPECT_EQ(r.sent[0].type, FlowtuneType::kFlowletStart);
  EXPECT_EQ(r.sent[1].type, FlowtuneType::kFlowletEnd);
  EXPECT_EQ(r.sent[1].ids.size(), FlowtuneOutbox::kMaxEnds);
  EXPECT_EQ(box.pending_ends(), 1u);
  for (uint32_t id = 1; id <= FlowtuneOutbox::kMaxStarts + 1; ++id) box.start({id, 1, 2, 1}, send);
  ASSERT_EQ(r.sent.size(), 3u);
  EXPECT_EQ(r.sent[2].ids.size(), FlowtuneOutbox::kMaxStarts);
  EXPECT_EQ(FlowtuneOutbox::kMaxStarts, 91u);
  EXPECT_EQ(FlowtuneOutbox::kMaxEnds, 366u);
}

TEST(FlowKey, EveryFieldChangesTheKey) {
  const uint64_t base = flowlet_key(0x0A000001, 0x0A000002, 17, 1000, 2000);
  EXPECT_NE(base, flowlet_key(0x0A000002, 0x0A000001, 17, 1000, 2000));  // direction
  EXPECT_NE(base, flowlet_key(0x0A000001, 0x0A000002, 6, 1000, 2000));
  EXPECT_NE(base, flowlet_key(0x0A000001, 0x0A000002, 17, 1001, 2000));
  EXPECT_NE(base, flowlet_key(0x0A000001, 0x0A000002, 17, 1000, 2001));
  EXPECT_NE(base, flowlet_key(0x0A000001, 0x0A000003, 17, 1000, 2000));
  EXPECT_EQ(base, flowlet_key(0x0A000001, 0x0A000002, 17, 1000, 2000));
}

}  // namespace
}  // namespace sluice
