#include "lib/mechanisms/flowtune/flowtune_wire.h"

#include <gtest/gtest.h>

#include <cstring>
#include <memory>
#include <random>
#include <vector>

#include "tests/fuzz/flowtune_codec_check.h"

namespace sluice {
namespace {

std::vector<uint8_t> bytes(const uint8_t* p, uint32_t len) { return {p, p + len}; }

// Parses a copy exactly `len` bytes long on the heap, so that a sanitizer
// build reports any read past the end.
FlowtuneParseResult parse_exact(const uint8_t* p, uint32_t len, FlowtuneMessage* m,
                                std::unique_ptr<uint8_t[]>* keep) {
  *keep = std::make_unique<uint8_t[]>(len == 0 ? 1 : len);
  if (len != 0) std::memcpy(keep->get(), p, len);
  return parse_flowtune(len == 0 ? nullptr : keep->get(), len, m);
}
FlowtuneParseResult parse_vec(const std::vector<uint8_t>& v, FlowtuneMessage* m) {
  return parse_flowtune(v.empty() ? nullptr : v.data(), static_cast<uint32_t>(v.size()), m);
}

const FlowletStart kStarts[] = {{0x01020304, 0x0A000001, 0x0A000002, 1},
                                {0xFFFFFFFF, 0xC0A80101, 0xC0A80202, 0xFFFF}};
const FlowletEnd kEnds[] = {{0x01020304}, {7}, {0xA0B0C0D0}};
const RateUpdate kRates[] = {{0x01020304, 10'000'000}, {9, 0}};

TEST(FlowtuneWire, FlowletStartBytes) {
  uint8_t buf[64];
  const uint32_t len = build_flowlet_start(buf, sizeof buf, kStarts);
  const std::vector<uint8_t> want = {
      'F',  'T',  1,    1,    0x00, 0x02, 0,    0,     // header: v1, FLOWLET_START, count 2
      0x01, 0x02, 0x03, 0x04, 0x0A, 0x00, 0x00, 0x01,  // flow id, src
      0x0A, 0x00, 0x00, 0x02, 0x00, 0x01, 0x00, 0x00,  // dst, weight 1, reserved
      0xFF, 0xFF, 0xFF, 0xFF, 0xC0, 0xA8, 0x01, 0x01,  //
      0xC0, 0xA8, 0x02, 0x02, 0xFF, 0xFF, 0x00, 0x00};
  EXPECT_EQ(bytes(buf, len), want);
}

TEST(FlowtuneWire, FlowletEndBytes) {
  uint8_t buf[64];
  const uint32_t len = build_flowlet_end(buf, sizeof buf, kEnds);
  const std::vector<uint8_t> want = {'F',  'T',  1,    2,    0x00, 0x03, 0,    0,    0x01, 0x02,
                                     0x03, 0x04, 0x00, 0x00, 0x00, 0x07, 0xA0, 0xB0, 0xC0, 0xD0};
  EXPECT_EQ(bytes(buf, len), want);
}

TEST(FlowtuneWire, RateUpdateBytes) {
  uint8_t buf[64];
  const uint32_t len = build_rate_update(buf, sizeof buf, kRates);
  const std::vector<uint8_t> want = {'F',  'T',  1,    3,    0x00, 0x02, 0,    0,     // header
                                     0x01, 0x02, 0x03, 0x04, 0x00, 0x98, 0x96, 0x80,  // 10 Gbit/s
                                     0x00, 0x00, 0x00, 0x09, 0x00, 0x00, 0x00, 0x00};
  EXPECT_EQ(bytes(buf, len), want);
}

TEST(FlowtuneWire, EmptyListIsABareHeader) {
  uint8_t buf[8];
  EXPECT_EQ(build_rate_update(buf, sizeof buf, {}), 8u);
  EXPECT_EQ(bytes(buf, 8), (std::vector<uint8_t>{'F', 'T', 1, 3, 0, 0, 0, 0}));
  FlowtuneMessage m;
  ASSERT_EQ(parse_flowtune(buf, 8, &m), FlowtuneParseResult::kOk);
  EXPECT_EQ(m.count, 0u);
  EXPECT_EQ(build_flowlet_end(buf, 7, {}), 0u);
}

TEST(FlowtuneWire, RoundTripEveryType) {
  uint8_t buf[128];
  FlowtuneMessage m;

  uint32_t len = build_flowlet_start(buf, sizeof buf, kStarts);
  ASSERT_EQ(len, 8u + 2 * 16);
  ASSERT_EQ(parse_flowtune(buf, len, &m), FlowtuneParseResult::kOk);
  EXPECT_EQ(m.version, 1);
  EXPECT_EQ(m.type, FlowtuneType::kFlowletStart);
  ASSERT_EQ(m.count, 2u);
  EXPECT_EQ(m.entries, buf + 8);
  for (uint32_t i = 0; i < 2; ++i) {
    EXPECT_EQ(m.flowlet_start(i).flow_id, kStarts[i].flow_id);
    EXPECT_EQ(m.flowlet_start(i).src_ip, kStarts[i].src_ip);
    EXPECT_EQ(m.flowlet_start(i).dst_ip, kStarts[i].dst_ip);
    EXPECT_EQ(m.flowlet_start(i).weight, kStarts[i].weight);
  }

  len = build_flowlet_end(buf, sizeof buf, kEnds);
  ASSERT_EQ(len, 8u + 3 * 4);
  ASSERT_EQ(parse_flowtune(buf, len, &m), FlowtuneParseResult::kOk);
  EXPECT_EQ(m.type, FlowtuneType::kFlowletEnd);
  ASSERT_EQ(m.count, 3u);
  for (uint32_t i = 0; i < 3; ++i) EXPECT_EQ(m.flowlet_end(i).flow_id, kEnds[i].flow_id);

  len = build_rate_update(buf, sizeof buf, kRates);
  ASSERT_EQ(len, 8u + 2 * 8);
  ASSERT_EQ(parse_flowtune(buf, len, &m), FlowtuneParseResult::kOk);
  EXPECT_EQ(m.type, FlowtuneType::kRateUpdate);
  ASSERT_EQ(m.count, 2u);
  for (uint32_t i = 0; i < 2; ++i) {
    EXPECT_EQ(m.rate_update(i).flow_id, kRates[i].flow_id);
    EXPECT_EQ(m.rate_update(i).rate_kbps, kRates[i].rate_kbps);
  }
}

TEST(FlowtuneWire, EntriesPerPayload) {
  EXPECT_EQ(kFlowtuneMtuPayload, 1472u);
  EXPECT_EQ(flowtune_entries_per_payload(FlowtuneType::kFlowletStart, kFlowtuneMtuPayload), 91u);
  EXPECT_EQ(flowtune_entries_per_payload(FlowtuneType::kFlowletEnd, kFlowtuneMtuPayload), 366u);
  EXPECT_EQ(flowtune_entries_per_payload(FlowtuneType::kRateUpdate, kFlowtuneMtuPayload), 183u);
  EXPECT_EQ(flowtune_entries_per_payload(FlowtuneType::kRateUpdate, 7), 0u);
  EXPECT_EQ(flowtune_entries_per_payload(FlowtuneType::kRateUpdate, 8), 0u);
  EXPECT_EQ(flowtune_entries_per_payload(FlowtuneType::kRateUpdate, 16), 1u);
  // The 16-bit count caps a huge budget.
  EXPECT_EQ(flowtune_entries_per_payload(FlowtuneType::kFlowletEnd, 0xFFFFFFFF), 0xFFFFu);
  EXPECT_EQ(flowtune_entries_per_payload(static_cast<FlowtuneType>(0), 1500), 0u);
}

// The most entries per MTU fit in exactly the MTU payload; one more does not.
TEST(FlowtuneWire, MaxEntriesPerMtu) {
  std::vector<uint8_t> buf(kFlowtuneMtuPayload);
  const uint32_t cap = kFlowtuneMtuPayload;

  std::vector<FlowletStart> s(92, FlowletStart{1, 2, 3, 4});
  for (uint32_t i = 0; i < s.size(); ++i) s[i].flow_id = i;
  uint32_t len = build_flowlet_start(buf.data(), cap, std::span(s).first(91));
  EXPECT_EQ(len, 8u + 91 * 16);
  EXPECT_LE(len, cap);
  FlowtuneMessage m;
  ASSERT_EQ(parse_flowtune(buf.data(), len, &m), FlowtuneParseResult::kOk);
  EXPECT_EQ(m.count, 91u);
  EXPECT_EQ(m.flowlet_start(90).flow_id, 90u);
  EXPECT_EQ(build_flowlet_start(buf.data(), cap, s), 0u);

  std::vector<FlowletEnd> e(367, FlowletEnd{5});
  len = build_flowlet_end(buf.data(), cap, std::span(e).first(366));
  EXPECT_EQ(len, 8u + 366 * 4);
  ASSERT_EQ(parse_flowtune(buf.data(), len, &m), FlowtuneParseResult::kOk);
  EXPECT_EQ(m.count, 366u);
  EXPECT_EQ(build_flowlet_end(buf.data(), cap, e), 0u);

  std::vector<RateUpdate> r(184, RateUpdate{6, 7});
  len = build_rate_update(buf.data(), cap, std::span(r).first(183));
  EXPECT_EQ(len, 8u + 183 * 8);
  ASSERT_EQ(parse_flowtune(buf.data(), len, &m), FlowtuneParseResult::kOk);
  EXPECT_EQ(m.count, 183u);
  EXPECT_EQ(build_rate_update(buf.data(), cap, r), 0u);
}

// Splitting a long list by entries_per_payload sends every entry once.
TEST(FlowtuneWire, SplitLongList) {
  std::vector<RateUpdate> r(500);
  for (uint32_t i = 0; i < r.size(); ++i) r[i] = {i, i * 10};
  const uint32_t per = flowtune_entries_per_payload(FlowtuneType::kRateUpdate, kFlowtuneMtuPayload);
  uint8_t buf[kFlowtuneMtuPayload];
  std::vector<uint32_t> seen;
  for (size_t at = 0; at < r.size(); at += per) {
    const auto part =
        std::span<const RateUpdate>(r).subspan(at, std::min<size_t>(per, r.size() - at));
    const uint32_t len = build_rate_update(buf, sizeof buf, part);
    ASSERT_NE(len, 0u);
    FlowtuneMessage m;
    ASSERT_EQ(parse_flowtune(buf, len, &m), FlowtuneParseResult::kOk);
    for (uint32_t i = 0; i < m.count; ++i) seen.push_back(m.rate_update(i).flow_id);
  }
  ASSERT_EQ(seen.size(), r.size());
  for (uint32_t i = 0; i < seen.size(); ++i) EXPECT_EQ(seen[i], i);
}

TEST(FlowtuneWire, BuildersNeverWritePastCap) {
  uint8_t buf[64];
  for (uint32_t cap = 0; cap < 8 + 2 * 16; ++cap) {
    std::memset(buf, 0xEE, sizeof buf);
    EXPECT_EQ(build_flowlet_start(buf, cap, kStarts), 0u) << cap;
    EXPECT_EQ(build_flowlet_end(buf, cap < 20 ? cap : 19, kEnds), 0u) << cap;
    EXPECT_EQ(build_rate_update(buf, cap < 24 ? cap : 23, kRates), 0u) << cap;
    for (uint32_t i = 0; i < sizeof buf; ++i) ASSERT_EQ(buf[i], 0xEE) << "cap " << cap;
  }
  std::memset(buf, 0xEE, sizeof buf);
  EXPECT_EQ(build_flowlet_start(buf, 40, kStarts), 40u);
  EXPECT_EQ(buf[40], 0xEE);
}

TEST(FlowtuneWire, BuilderRefusesZeroWeightAndHugeCount) {
  uint8_t buf[64];
  const FlowletStart zero[] = {{1, 2, 3, 5}, {4, 5, 6, 0}};
  EXPECT_EQ(build_flowlet_start(buf, sizeof buf, zero), 0u);
  // 65536 entries: the count does not fit in 16 bits, whatever the cap.
  std::vector<FlowletEnd> e(0x10000, FlowletEnd{1});
  std::vector<uint8_t> big(8 + 4 * e.size());
  EXPECT_EQ(build_flowlet_end(big.data(), static_cast<uint32_t>(big.size()), e), 0u);
  EXPECT_EQ(
      build_flowlet_end(big.data(), static_cast<uint32_t>(big.size()), std::span(e).first(0xFFFF)),
      8u + 4 * 0xFFFF);
}

std::vector<uint8_t> valid_start() {
  uint8_t buf[64];
  const uint32_t len = build_flowlet_start(buf, sizeof buf, kStarts);
  return bytes(buf, len);
}

TEST(FlowtuneWire, MalformedReasons) {
  FlowtuneMessage m;
  const std::vector<uint8_t> ok = valid_start();
  ASSERT_EQ(parse_vec(ok, &m), FlowtuneParseResult::kOk);

  EXPECT_EQ(parse_vec({}, &m), FlowtuneParseResult::kTooShort);
  EXPECT_EQ(parse_vec({'F', 'T', 1, 1, 0, 0, 0}, &m), FlowtuneParseResult::kTooShort);

  auto bad = ok;
  bad[0] = 'S';
  EXPECT_EQ(parse_vec(bad, &m), FlowtuneParseResult::kBadMagic);
  bad = ok;
  bad[1] = 'L';
  EXPECT_EQ(parse_vec(bad, &m), FlowtuneParseResult::kBadMagic);

  for (uint8_t v : {0, 2, 255}) {
    bad = ok;
    bad[2] = v;
    EXPECT_EQ(parse_vec(bad, &m), FlowtuneParseResult::kBadVersion) << int{v};
  }
  for (uint8_t t : {0, 4, 255}) {
    bad = ok;
    bad[3] = t;
    EXPECT_EQ(parse_vec(bad, &m), FlowtuneParseResult::kUnknownType) << int{t};
  }

  // Count says 3, 1, 0 or 65535 entries, but 2 follow.
  for (uint16_t c : {3, 1, 0, 0xFFFF}) {
    bad = ok;
    store_be16(bad.data() + 4, c);
    EXPECT_EQ(parse_vec(bad, &m), FlowtuneParseResult::kCountMismatch) << c;
  }
  // Trailing bytes and a partial entry.
  bad = ok;
  bad.push_back(0);
  EXPECT_EQ(parse_vec(bad, &m), FlowtuneParseResult::kCountMismatch);
  bad = ok;
  bad.resize(bad.size() + 16, 0x11);
  EXPECT_EQ(parse_vec(bad, &m), FlowtuneParseResult::kCountMismatch);
  // The same bytes as a different type: the entry size differs. 40 bytes are
  // 8 FLOWLET_END entries, not 2.
  bad = ok;
  bad[3] = 2;
  EXPECT_EQ(parse_vec(bad, &m), FlowtuneParseResult::kCountMismatch);

  bad = ok;
  bad[8 + 16 + 12] = 0;
  bad[8 + 16 + 13] = 0;  // second entry's weight
  EXPECT_EQ(parse_vec(bad, &m), FlowtuneParseResult::kZeroWeight);

  // Magic is checked before version, version before type, type before count.
  EXPECT_EQ(parse_vec({'X', 'T', 9, 9, 0, 5, 0, 0}, &m), FlowtuneParseResult::kBadMagic);
  EXPECT_EQ(parse_vec({'F', 'T', 9, 9, 0, 5, 0, 0}, &m), FlowtuneParseResult::kBadVersion);
  EXPECT_EQ(parse_vec({'F', 'T', 1, 9, 0, 5, 0, 0}, &m), FlowtuneParseResult::kUnknownType);
}

TEST(FlowtuneWire, ReservedBytesAreIgnored) {
  FlowtuneMessage m;
  auto v = valid_start();
  v[6] = 0xAB;
  v[7] = 0xCD;
  v[8 + 14] = 0x12;  // first entry's reserved
  v[8 + 15] = 0x34;
  ASSERT_EQ(parse_vec(v, &m), FlowtuneParseResult::kOk);
  EXPECT_EQ(m.flowlet_start(0).weight, 1u);
  EXPECT_EQ(m.flowlet_start(0).dst_ip, 0x0A000002u);
}

TEST(FlowtuneWire, ResultNames) {
  EXPECT_EQ(flowtune_parse_result_name(FlowtuneParseResult::kOk), "ok");
  EXPECT_EQ(flowtune_parse_result_name(FlowtuneParseResult::kTooShort), "too_short");
  EXPECT_EQ(flowtune_parse_result_name(FlowtuneParseResult::kBadMagic), "bad_magic");
  EXPECT_EQ(flowtune_parse_result_name(FlowtuneParseResult::kBadVersion), "bad_version");
  EXPECT_EQ(flowtune_parse_result_name(FlowtuneParseResult::kUnknownType), "unknown_type");
  EXPECT_EQ(flowtune_parse_result_name(FlowtuneParseResult::kCountMismatch), "count_mismatch");
  EXPECT_EQ(flowtune_parse_result_name(FlowtuneParseResult::kZeroWeight), "zero_weight");
  EXPECT_EQ(kFlowtuneParseResultCount, 7u);
}

// Every prefix of a valid message of each type, in a buffer exactly that
// long: only the full length parses, and nothing reads past the end.
TEST(FlowtuneWire, TruncationAtEveryLength) {
  uint8_t buf[64];
  const uint32_t lens[] = {build_flowlet_start(buf, sizeof buf, kStarts), 0, 0};
  std::vector<uint8_t> msgs[3];
  msgs[0] = bytes(buf, lens[0]);
  msgs[1] = bytes(buf, build_flowlet_end(buf, sizeof buf, kEnds));
  msgs[2] = bytes(buf, build_rate_update(buf, sizeof buf, kRates));
  for (const auto& full : msgs) {
    ASSERT_GT(full.size(), 8u);
    for (uint32_t len = 0; len <= full.size(); ++len) {
      FlowtuneMessage m;
      std::unique_ptr<uint8_t[]> keep;
      const FlowtuneParseResult r = parse_exact(full.data(), len, &m, &keep);
      if (len < 8) {
        EXPECT_EQ(r, FlowtuneParseResult::kTooShort) << len;
      } else if (len < full.size()) {
        EXPECT_EQ(r, FlowtuneParseResult::kCountMismatch) << len;
      } else {
        EXPECT_EQ(r, FlowtuneParseResult::kOk);
      }
    }
  }
}

// The fuzz target's check (tests/fuzz/flowtune_codec_check.h) on mutated messages,
// so that every CI run exercises it without clang or libFuzzer: what
// parse_flowtune accepts lies inside the input and builds again to the same
// bytes, reserved fields aside. A fixed seed keeps a failure reproducible.
std::vector<uint8_t> random_message(std::mt19937& rng, uint32_t type) {
  uint8_t buf[kFlowtuneMtuPayload];
  const uint32_t n = rng() % 40;
  uint32_t len = 0;
  switch (type % 3) {
    case 0: {
      std::vector<FlowletStart> e(n);
      for (auto& x : e) {
        x = {static_cast<uint32_t>(rng()), static_cast<uint32_t>(rng()),
             static_cast<uint32_t>(rng()), static_cast<uint16_t>(1 + rng() % 0xFFFF)};
      }
      len = build_flowlet_start(buf, sizeof buf, e);
      break;
    }
    case 1: {
      std::vector<FlowletEnd> e(n);
      for (auto& x : e) x = {static_cast<uint32_t>(rng())};
      len = build_flowlet_end(buf, sizeof buf, e);
      break;
    }
    default: {
      std::vector<RateUpdate> e(n);
      for (auto& x : e) x = {static_cast<uint32_t>(rng()), static_cast<uint32_t>(rng())};
      len = build_rate_update(buf, sizeof buf, e);
      break;
    }
  }
  return bytes(buf, len);
}

void mutate(std::mt19937& rng, std::vector<uint8_t>& f) {
  switch (rng() % 5) {
    case 0:  // flip a byte
      if (!f.empty()) f[rng() % f.size()] ^= static_cast<uint8_t>(1 + rng() % 255);
      break;
    case 1:  // truncate
      f.resize(f.empty() ? 0 : rng() % f.size());
      break;
    case 2:  // a different type
      if (f.size() >= 4) f[3] = static_cast<uint8_t>(rng() % 5);
      break;
    case 3:  // a different count
      if (f.size() >= 6) f[4 + rng() % 2] = static_cast<uint8_t>(rng());
      break;
    default:  // trailing bytes
      f.resize(f.size() + rng() % 64, static_cast<uint8_t>(rng()));
      break;
  }
}

TEST(FlowtuneWireFuzz, AcceptedMessagesStayInsideAndRoundTrip) {
  std::mt19937 rng(20261125);
  uint32_t accepted[3] = {};
  for (uint32_t i = 0; i < 60'000; ++i) {
    std::vector<uint8_t> f = random_message(rng, i);
    const uint32_t rounds = i % 3;  // some unmutated, some twice
    for (uint32_t r = 0; r < rounds; ++r) mutate(rng, f);
    std::vector<uint8_t> exact(f);  // exactly sized for a sanitizer build
    ASSERT_TRUE(check_flowtune_codec(exact.empty() ? nullptr : exact.data(),
                                     static_cast<uint32_t>(exact.size())))
        << "input " << i;
    FlowtuneMessage m;
    if (parse_vec(exact, &m) == FlowtuneParseResult::kOk) {
      ++accepted[static_cast<uint8_t>(m.type) - 1];
    }
  }
  for (uint32_t t = 0; t < 3; ++t) EXPECT_GT(accepted[t], 1000u) << "type " << t + 1;
}

}  // namespace
}  // namespace sluice
