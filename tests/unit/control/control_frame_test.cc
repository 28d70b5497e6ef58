#include "lib/control/control_frame.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <initializer_list>
#include <memory>
#include <vector>

namespace sluice {
namespace {

constexpr MacAddr kDst = {0x02, 0x00, 0x00, 0x00, 0x00, 0x02};
constexpr MacAddr kSrc = {0x02, 0x00, 0x00, 0x00, 0x00, 0x01};

// `head` then zero padding up to max(60, head size).
std::vector<uint8_t> padded(std::initializer_list<uint8_t> head) {
  std::vector<uint8_t> f(std::max<size_t>(60, head.size()), 0x00);
  std::copy(head.begin(), head.end(), f.begin());
  return f;
}

std::vector<uint8_t> frame(const uint8_t* p, uint32_t len) { return {p, p + len}; }

// Parses a built frame from just past the ethertype.
ControlParseResult parse_frame(const std::vector<uint8_t>& f, ControlMessage* m) {
  return parse_control(f.data() + 14, static_cast<uint32_t>(f.size() - 14), m);
}

TEST(ControlFrame, BfcPauseBytes) {
  uint8_t buf[128];
  const uint32_t len = build_bfc_pause(buf, sizeof buf, kDst, kSrc, 3, 0x0102);
  EXPECT_EQ(frame(buf, len), padded({0x02, 0,    0, 0, 0, 0x02,  // dst
                                     0x02, 0,    0, 0, 0, 0x01,  // src
                                     0x88, 0xB5,                 // type
                                     'S',  'L',  1, 3,           // magic, version, BFC_PAUSE
                                     0x00, 0x02, 3, 0,           // body length 2, shard 3, flags
                                     0x01, 0x02}));              // queue
}

TEST(ControlFrame, BfcResumeBytes) {
  uint8_t buf[60];
  const uint32_t len = build_bfc_resume(buf, sizeof buf, kDst, kSrc, 0, 7);
  EXPECT_EQ(frame(buf, len), padded({0x02, 0,    0,   0,   0, 0x02, 0x02, 0,    0, 0, 0,    0x01,
                                     0x88, 0xB5, 'S', 'L', 1, 4,    0x00, 0x02, 0, 0, 0x00, 0x07}));
}

TEST(ControlFrame, FixedFramesNeedSixtyBytes) {
  uint8_t buf[60];
  EXPECT_EQ(build_bfc_pause(buf, 59, kDst, kSrc, 0, 1), 0u);
  EXPECT_EQ(build_bfc_resume(buf, 59, kDst, kSrc, 0, 1), 0u);
  EXPECT_EQ(build_bfc_pause(buf, 60, kDst, kSrc, 0, 1), 60u);
}

TEST(ControlFrame, FgCreditBytes) {
  uint8_t buf[128];
  const CreditEntry e[] = {{0x0A000001, 1500}, {0xC0A80102, 0x01020304}};
  const ControlListFrame r = build_fg_credit(buf, sizeof buf, 1500, kDst, kSrc, 1, e);
  EXPECT_EQ(r.consumed, 2u);
  EXPECT_EQ(frame(buf, r.len),
            padded({0x02, 0,    0, 0, 0,    0x02, 0x02, 0,    0, 0, 0, 0x01, 0x88, 0xB5,  //
                    'S',  'L',  1, 1, 0x00, 18,   1,    0,     // 2 + 2 x 8
                    0x00, 0x02,                                // count
                    10,   0,    0, 1, 0x00, 0x00, 0x05, 0xDC,  // 10.0.0.1, 1500
                    192,  168,  1, 2, 0x01, 0x02, 0x03, 0x04}));
}

TEST(ControlFrame, FgDstPauseBytes) {
  uint8_t buf[128];
  const DstPauseEntry e[] = {{0x0A000002, true}, {0x0A000003, false}};
  const ControlListFrame r = build_fg_dst_pause(buf, sizeof buf, 1500, kDst, kSrc, 0, e);
  EXPECT_EQ(r.consumed, 2u);
  EXPECT_EQ(frame(buf, r.len),
            padded({0x02, 0,   0, 0, 0,    0x02, 0x02, 0, 0,    0,    0, 0x01, 0x88, 0xB5,  //
                    'S',  'L', 1, 2, 0x00, 18,   0,    0, 0x00, 0x02,                       //
                    10,   0,   0, 2, 1,    0,    0,    0,                                   //
                    10,   0,   0, 3, 0,    0,    0,    0}));
}

TEST(ControlFrame, FgSyncBytes) {
  uint8_t buf[128];
  const SyncEntry e[] = {{0x0A000001, 0x0102030405060708ull, 0x1112131415161718ull},
                         {0x0A000009, 64, 3}};
  const ControlListFrame r = build_fg_sync(buf, sizeof buf, 1500, kDst, kSrc, 2, e);
  EXPECT_EQ(r.consumed, 2u);
  // Body: count (2) + 2 x 20 = 42 = 0x2A.
  EXPECT_EQ(frame(buf, r.len),
            padded({0x02, 0,    0,    0,    0,    0x02, 0x02, 0,    0,    0,    0, 0x01, 0x88,
                    0xB5,                                                               //
                    'S',  'L',  1,    6,    0x00, 42,   2,    0,    0x00, 0x02,         //
                    10,   0,    0,    1,    1,    2,    3,    4,    5,    6,    7, 8,   //
                    0x11, 0x12, 0x13, 0x14, 0x15, 0x16, 0x17, 0x18,                     //
                    10,   0,    0,    9,    0,    0,    0,    0,    0,    0,    0, 64,  //
                    0,    0,    0,    0,    0,    0,    0,    3}));
}

TEST(ControlFrame, LongListIsNotPadded) {
  // 5 credit entries: 14 + 8 + 2 + 40 = 64 bytes, above the minimum.
  uint8_t buf[128];
  std::vector<CreditEntry> e(5, CreditEntry{1, 2});
  EXPECT_EQ(build_fg_credit(buf, sizeof buf, 1500, kDst, kSrc, 0, e).len, 64u);
}

TEST(ControlFrame, BitmapBitOrderBytes) {
  // Queues 0, 9 and 17 paused out of 18: byte 0 = 0x01, byte 1 = 0x02
  // (queue 9 = bit 1 of byte 1), byte 2 = 0x02 (queue 17 = bit 1 of byte 2).
  const uint64_t words[1] = {(1ull << 0) | (1ull << 9) | (1ull << 17)};
  uint8_t buf[128];
  const uint32_t len = build_bfc_bitmap(buf, sizeof buf, kDst, kSrc, 5, words, 18);
  EXPECT_EQ(frame(buf, len),
            padded({0x02, 0,    0,    0,    0,   0x02, 0x02, 0,    0, 0, 0,
                    0x01, 0x88, 0xB5, 'S',  'L', 1,    5,    0x00, 5, 5, 0,  // body 2 + 3
                    0x00, 18,   0x01, 0x02, 0x02}));
}

TEST(ControlFrame, BitmapClearsBitsBeyondCount) {
  const uint64_t words[1] = {~0ull};
  uint8_t buf[128];
  const uint32_t len = build_bfc_bitmap(buf, sizeof buf, kDst, kSrc, 0, words, 10);
  ASSERT_EQ(len, 60u);
  EXPECT_EQ(buf[24], 0xFF);
  EXPECT_EQ(buf[25], 0x03);  // queues 8 and 9 only
  EXPECT_EQ(buf[26], 0x00);  // padding
}

TEST(ControlFrame, BitmapAcrossWords) {
  // 130 queues: queue 64 is bit 0 of byte 8, queue 129 is bit 1 of byte 16.
  uint64_t words[3] = {0, 1, 2};
  uint8_t buf[128];
  const uint32_t len = build_bfc_bitmap(buf, sizeof buf, kDst, kSrc, 0, words, 130);
  ASSERT_EQ(len, 60u);  // 14 + 8 + 2 + 17 = 41, padded
  for (int j = 0; j < 17; ++j) {
    const uint8_t want = j == 8 ? 0x01 : j == 16 ? 0x02 : 0x00;
    EXPECT_EQ(buf[24 + j], want) << j;
  }
  ControlMessage m;
  ASSERT_EQ(parse_control(buf + 14, len - 14, &m), ControlParseResult::kOk);
  uint64_t back[3] = {9, 9, 9};
  control_bitmap_to_words(m, back, 3);
  EXPECT_EQ(back[0], 0u);
  EXPECT_EQ(back[1], 1u);
  EXPECT_EQ(back[2], 2u);
  EXPECT_TRUE(m.queue_paused(64));
  EXPECT_TRUE(m.queue_paused(129));
  EXPECT_FALSE(m.queue_paused(128));
  EXPECT_FALSE(m.queue_paused(130));  // beyond the count
}

TEST(ControlFrame, BitmapTooBigForCap) {
  uint64_t words[2] = {};
  uint8_t buf[128];
  // 14 + 10 + 13 = 37 bytes, padded to 60.
  EXPECT_EQ(build_bfc_bitmap(buf, 59, kDst, kSrc, 0, words, 100), 0u);
  EXPECT_EQ(build_bfc_bitmap(buf, 60, kDst, kSrc, 0, words, 100), 60u);
}

TEST(ControlFrame, RoundTripCredit) {
  std::vector<CreditEntry> e;
  for (uint32_t i = 0; i < 40; ++i) e.push_back({0x0A000000 + i, i * 1000 + 7});
  std::vector<uint8_t> buf(2000);
  const ControlListFrame r = build_fg_credit(buf.data(), 2000, 1500, kDst, kSrc, 9, e);
  ASSERT_EQ(r.consumed, 40u);
  buf.resize(r.len);
  ControlMessage m;
  ASSERT_EQ(parse_frame(buf, &m), ControlParseResult::kOk);
  EXPECT_EQ(m.version, 1);
  EXPECT_EQ(m.type, ControlType::kFgCredit);
  EXPECT_EQ(m.shard, 9);
  EXPECT_EQ(m.flags, 0);
  EXPECT_EQ(m.body_len, 2 + 40 * 8);
  ASSERT_EQ(m.count, 40);
  for (uint32_t i = 0; i < 40; ++i) {
    EXPECT_EQ(m.credit(i).dst_ip, 0x0A000000 + i);
    EXPECT_EQ(m.credit(i).credit_bytes, i * 1000 + 7);
  }
}

TEST(ControlFrame, RoundTripDstPauseSyncQueue) {
  uint8_t buf[256];
  ControlMessage m;
  const DstPauseEntry d[] = {{0x0B000001, true}, {0x0B000002, false}, {0x0B000003, true}};
  ControlListFrame r = build_fg_dst_pause(buf, sizeof buf, 1500, kDst, kSrc, 0, d);
  ASSERT_EQ(parse_control(buf + 14, r.len - 14, &m), ControlParseResult::kOk);
  ASSERT_EQ(m.count, 3);
  EXPECT_EQ(m.dst_pause(2).dst_ip, 0x0B000003u);
  EXPECT_TRUE(m.dst_pause(0).pause);
  EXPECT_FALSE(m.dst_pause(1).pause);

  const SyncEntry s[] = {{0x0B000001, ~0ull, 5}, {0x0B000002, 1ull << 40, ~0ull - 1}};
  r = build_fg_sync(buf, sizeof buf, 1500, kDst, kSrc, 0, s);
  ASSERT_EQ(parse_control(buf + 14, r.len - 14, &m), ControlParseResult::kOk);
  ASSERT_EQ(m.count, 2);
  EXPECT_EQ(m.sync(0).bytes_sent, ~0ull);
  EXPECT_EQ(m.sync(1).bytes_sent, 1ull << 40);
  EXPECT_EQ(m.sync(1).dst_ip, 0x0B000002u);
  EXPECT_EQ(m.sync(0).credit_received, 5u);
  EXPECT_EQ(m.sync(1).credit_received, ~0ull - 1);

  const uint32_t len = build_bfc_resume(buf, sizeof buf, kDst, kSrc, 4, 65535);
  ASSERT_EQ(parse_control(buf + 14, len - 14, &m), ControlParseResult::kOk);
  EXPECT_EQ(m.type, ControlType::kBfcResume);
  EXPECT_EQ(m.queue(), 65535);
  EXPECT_EQ(m.shard, 4);
}

TEST(ControlFrame, EmptyListIsAHeaderOnlyFrame) {
  uint8_t buf[60];
  const ControlListFrame r =
      build_fg_credit(buf, sizeof buf, 1500, kDst, kSrc, 0, std::span<const CreditEntry>());
  EXPECT_EQ(r.len, 60u);
  EXPECT_EQ(r.consumed, 0u);
  ControlMessage m;
  ASSERT_EQ(parse_control(buf + 14, 46, &m), ControlParseResult::kOk);
  EXPECT_EQ(m.count, 0);
}

// MTU is the payload after the 14-byte Ethernet header. Per frame:
// credit and dstPause (1500 - 8 - 2) / 8 = 186; sync (1500 - 10) / 20 = 74.
TEST(ControlSplit, Mtu1500Counts) {
  EXPECT_EQ(control_entries_per_frame(1500, kFgCreditEntryLen), 186u);
  EXPECT_EQ(control_entries_per_frame(1500, kFgSyncEntryLen), 74u);
  EXPECT_EQ(control_entries_per_frame(9000, kFgCreditEntryLen), 1123u);  // 8990 / 8
  EXPECT_EQ(control_entries_per_frame(9, kFgCreditEntryLen), 0u);
}

TEST(ControlSplit, CreditListSplitsAtMtu) {
  std::vector<CreditEntry> e(400);
  for (uint32_t i = 0; i < e.size(); ++i) e[i] = {i + 1, i};
  std::vector<uint8_t> buf(1514);
  std::span<const CreditEntry> rest(e);
  std::vector<uint32_t> per_frame;
  uint32_t next = 0;
  while (!rest.empty()) {
    const ControlListFrame r = build_fg_credit(buf.data(), 1514, 1500, kDst, kSrc, 0, rest);
    ASSERT_GT(r.consumed, 0u);
    EXPECT_LE(r.len, 1514u);
    ControlMessage m;
    ASSERT_EQ(parse_control(buf.data() + 14, r.len - 14, &m), ControlParseResult::kOk);
    ASSERT_EQ(m.count, r.consumed);
    for (uint32_t i = 0; i < m.count; ++i) EXPECT_EQ(m.credit(i).dst_ip, ++next);
    per_frame.push_back(r.consumed);
    rest = rest.subspan(r.consumed);
  }
  EXPECT_EQ(per_frame, (std::vector<uint32_t>{186, 186, 28}));
  // A full frame: 14 + 8 + 2 + 186 * 8 = 1512 bytes, payload 1498 <= 1500.
  EXPECT_EQ(build_fg_credit(buf.data(), 1514, 1500, kDst, kSrc, 0, e).len, 1512u);
}

TEST(ControlSplit, MtuBoundaryExact) {
  // Payload 8 + 2 + 3 * 8 = 34: MTU 34 holds 3 entries, MTU 33 holds 2.
  std::vector<CreditEntry> e(5, CreditEntry{1, 1});
  uint8_t buf[128];
  EXPECT_EQ(build_fg_credit(buf, sizeof buf, 34, kDst, kSrc, 0, e).consumed, 3u);
  EXPECT_EQ(build_fg_credit(buf, sizeof buf, 33, kDst, kSrc, 0, e).consumed, 2u);
  // Sync: 8 + 2 + 20 = 30 fits one entry at MTU 30, none at 29.
  std::vector<SyncEntry> s(3, SyncEntry{1, 1, 1});
  EXPECT_EQ(build_fg_sync(buf, sizeof buf, 30, kDst, kSrc, 0, s).consumed, 1u);
  const ControlListFrame none = build_fg_sync(buf, sizeof buf, 29, kDst, kSrc, 0, s);
  EXPECT_EQ(none.len, 0u);
  EXPECT_EQ(none.consumed, 0u);
}

TEST(ControlSplit, CapLimitsLikeMtu) {
  // cap 100: payload at most 86, so (86 - 10) / 8 = 9 entries, 14 + 10 + 72 = 96 bytes.
  std::vector<CreditEntry> e(50, CreditEntry{1, 1});
  uint8_t buf[100];
  const ControlListFrame r = build_fg_credit(buf, sizeof buf, 1500, kDst, kSrc, 0, e);
  EXPECT_EQ(r.consumed, 9u);
  EXPECT_EQ(r.len, 96u);
  // Below the 60-byte minimum nothing can be built.
  EXPECT_EQ(build_fg_credit(buf, 59, 1500, kDst, kSrc, 0, e).len, 0u);
}

// --- parse errors ---------------------------------------------------------

ControlParseResult parse_bytes(const std::vector<uint8_t>& b) {
  ControlMessage m;
  return parse_control(b.data(), static_cast<uint32_t>(b.size()), &m);
}

TEST(ControlParse, ShortHeader) {
  for (uint32_t n = 0; n < 8; ++n) {
    std::vector<uint8_t> b = {'S', 'L', 1, 3, 0, 2, 0, 0};
    b.resize(n);
    EXPECT_EQ(parse_bytes(b), ControlParseResult::kTooShort) << n;
  }
}

TEST(ControlParse, BadMagic) {
  EXPECT_EQ(parse_bytes({'S', 'M', 1, 3, 0, 2, 0, 0, 0, 1}), ControlParseResult::kBadMagic);
  EXPECT_EQ(parse_bytes({'L', 'S', 1, 3, 0, 2, 0, 0, 0, 1}), ControlParseResult::kBadMagic);
}

TEST(ControlParse, BadVersion) {
  EXPECT_EQ(parse_bytes({'S', 'L', 2, 3, 0, 2, 0, 0, 0, 1}), ControlParseResult::kBadVersion);
  EXPECT_EQ(parse_bytes({'S', 'L', 0, 3, 0, 2, 0, 0, 0, 1}), ControlParseResult::kBadVersion);
}

TEST(ControlParse, UnknownType) {
  EXPECT_EQ(parse_bytes({'S', 'L', 1, 0, 0, 2, 0, 0, 0, 1}), ControlParseResult::kUnknownType);
  EXPECT_EQ(parse_bytes({'S', 'L', 1, 7, 0, 2, 0, 0, 0, 1}), ControlParseResult::kUnknownType);
  EXPECT_EQ(parse_bytes({'S', 'L', 1, 255, 0, 2, 0, 0, 0, 1}), ControlParseResult::kUnknownType);
  EXPECT_EQ(parse_bytes({'S', 'L', 1, 3, 0, 2, 0, 0, 0, 1}), ControlParseResult::kOk);
}

TEST(ControlParse, BodyLongerThanFrame) {
  // Body length 3 with only 2 body bytes present.
  EXPECT_EQ(parse_bytes({'S', 'L', 1, 3, 0, 3, 0, 0, 0, 1}), ControlParseResult::kMalformed);
  // FG_CREDIT claiming one entry (body 10) with 9 body bytes.
  EXPECT_EQ(parse_bytes({'S', 'L', 1, 1, 0, 10, 0, 0, 0, 1, 10, 0, 0, 1, 0, 0, 0}),
            ControlParseResult::kMalformed);
  // Body length 0xFFFF on a short frame.
  EXPECT_EQ(parse_bytes({'S', 'L', 1, 1, 0xFF, 0xFF, 0, 0, 0, 1}), ControlParseResult::kMalformed);
}

TEST(ControlParse, BodyInconsistentWithLayout) {
  // Body too short for even the count.
  EXPECT_EQ(parse_bytes({'S', 'L', 1, 3, 0, 1, 0, 0, 0, 1}), ControlParseResult::kMalformed);
  EXPECT_EQ(parse_bytes({'S', 'L', 1, 1, 0, 0, 0, 0, 0, 0}), ControlParseResult::kMalformed);
  // BFC_PAUSE with a 4-byte body.
  EXPECT_EQ(parse_bytes({'S', 'L', 1, 3, 0, 4, 0, 0, 0, 1, 0, 0}), ControlParseResult::kMalformed);
  // FG_CREDIT count 2 with body for one entry (10, not 18).
  EXPECT_EQ(parse_bytes({'S', 'L', 1, 1, 0, 10, 0, 0, 0, 2, 10, 0, 0, 1, 0, 0, 0, 1}),
            ControlParseResult::kMalformed);
  // FG_CREDIT count 1 with an entry and 1 extra body byte.
  EXPECT_EQ(parse_bytes({'S', 'L', 1, 1, 0, 11, 0, 0, 0, 1, 10, 0, 0, 1, 0, 0, 0, 1, 0}),
            ControlParseResult::kMalformed);
  // FG_SYNC count 1 needs body 14, not 10.
  EXPECT_EQ(parse_bytes({'S', 'L', 1, 6, 0, 10, 0, 0, 0, 1, 10, 0, 0, 1, 0, 0, 0, 1}),
            ControlParseResult::kMalformed);
  // BFC_BITMAP of 9 queues needs 2 bitmap bytes (body 4), not 1.
  EXPECT_EQ(parse_bytes({'S', 'L', 1, 5, 0, 3, 0, 0, 0, 9, 0xFF}), ControlParseResult::kMalformed);
  EXPECT_EQ(parse_bytes({'S', 'L', 1, 5, 0, 4, 0, 0, 0, 9, 0xFF, 1}), ControlParseResult::kOk);
}

TEST(ControlParse, PaddingAndFlagsIgnored) {
  ControlMessage m;
  const std::vector<uint8_t> b = {'S', 'L', 1, 4, 0, 2, 7, 0x80, 0, 5, 0xAA, 0xBB, 0xCC};
  ASSERT_EQ(parse_control(b.data(), static_cast<uint32_t>(b.size()), &m), ControlParseResult::kOk);
  EXPECT_EQ(m.queue(), 5);
  EXPECT_EQ(m.shard, 7);
  EXPECT_EQ(m.flags, 0x80);
}

// Every prefix of every kind of frame, copied into an exactly-sized heap
// buffer, so AddressSanitizer catches any read at or past len.
TEST(ControlParse, TruncationNeverReadsPastLen) {
  std::vector<std::vector<uint8_t>> frames;
  uint8_t buf[256];
  const CreditEntry c[] = {{1, 2}, {3, 4}, {5, 6}, {7, 8}, {9, 10}, {11, 12}};
  const DstPauseEntry d[] = {{1, true}, {2, false}, {3, true}, {4, true}, {5, false}, {6, true}};
  const SyncEntry s[] = {{1, 2, 3}, {3, 4, 5}, {5, 6, 7}, {7, 8, 9}};
  const uint64_t words[2] = {0x1234, 0x5678};
  frames.push_back(frame(buf, build_fg_credit(buf, 256, 1500, kDst, kSrc, 0, c).len));
  frames.push_back(frame(buf, build_fg_dst_pause(buf, 256, 1500, kDst, kSrc, 0, d).len));
  frames.push_back(frame(buf, build_fg_sync(buf, 256, 1500, kDst, kSrc, 0, s).len));
  frames.push_back(frame(buf, build_bfc_pause(buf, 256, kDst, kSrc, 0, 1)));
  frames.push_back(frame(buf, build_bfc_resume(buf, 256, kDst, kSrc, 0, 1)));
  frames.push_back(frame(buf, build_bfc_bitmap(buf, 256, kDst, kSrc, 0, words, 128)));
  for (const auto& f : frames) {
    ASSERT_GT(f.size(), 14u);
    const uint32_t payload = static_cast<uint32_t>(f.size() - 14);
    ControlMessage full;
    ASSERT_EQ(parse_control(f.data() + 14, payload, &full), ControlParseResult::kOk);
    const uint32_t needed = kControlHeaderLen + full.body_len;
    for (uint32_t n = 0; n <= payload; ++n) {
      std::unique_ptr<uint8_t[]> exact(new uint8_t[n == 0 ? 1 : n]);
      std::copy(f.begin() + 14, f.begin() + 14 + n, exact.get());
      // With n == 0 the one-byte allocation is never read: len says 0.
      ControlMessage m;
      const ControlParseResult r = parse_control(exact.get(), n, &m);
      if (n < kControlHeaderLen) {
        EXPECT_EQ(r, ControlParseResult::kTooShort) << n;
      } else if (n < needed) {
        EXPECT_EQ(r, ControlParseResult::kMalformed) << n;
      } else {
        ASSERT_EQ(r, ControlParseResult::kOk) << n;
        // Touch every entry byte the view exposes.
        uint32_t sum = 0;
        for (uint32_t i = 0; i + kControlCountLen < m.body_len; ++i) sum += m.entries[i];
        (void)sum;
      }
    }
  }
}

}  // namespace
}  // namespace sluice
