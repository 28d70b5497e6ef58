// The control codec's fuzz check (tests/fuzz/control_codec_check.h) on
// mutated frames of every type, so that every CI run exercises it without
// clang or libFuzzer. A fixed seed keeps a failure reproducible.
#include <gtest/gtest.h>

#include <cstdint>
#include <random>
#include <vector>

#include "tests/fuzz/control_codec_check.h"

namespace sluice {
namespace {

std::vector<uint8_t> valid_frame(std::mt19937& rng, uint32_t type) {
  const MacAddr a{{2, 0, 0, 0, 0, 1}}, b{{2, 0, 0, 0, 0, 2}};
  std::vector<uint8_t> f(2048);
  const uint32_t n = rng() % 40;
  const auto shard = static_cast<uint8_t>(rng());
  const auto cap = static_cast<uint32_t>(f.size());
  uint32_t len = 0;
  switch (type % 6) {
    case 0: {
      std::vector<CreditEntry> e(n);
      for (auto& x : e) x = {static_cast<uint32_t>(rng()), static_cast<uint32_t>(rng())};
      len = build_fg_credit(f.data(), cap, 1500, a, b, shard, e).len;
      break;
    }
    case 1: {
      std::vector<DstPauseEntry> e(n);
      for (auto& x : e) x = {static_cast<uint32_t>(rng()), (rng() & 1) != 0};
      len = build_fg_dst_pause(f.data(), cap, 1500, a, b, shard, e).len;
      break;
    }
    case 2: {
      std::vector<SyncEntry> e(n);
      for (auto& x : e) x = {static_cast<uint32_t>(rng()), uint64_t{rng()} << 32 | rng(), rng()};
      len = build_fg_sync(f.data(), cap, 1500, a, b, shard, e).len;
      break;
    }
    case 3: {
      const uint64_t words[4] = {uint64_t{rng()} << 32 | rng(), rng(), rng(), rng()};
      len = build_bfc_bitmap(f.data(), cap, a, b, shard, words, static_cast<uint16_t>(rng() % 257));
      break;
    }
    case 4:
      len = build_bfc_pause(f.data(), cap, a, b, shard, static_cast<uint16_t>(rng()));
      break;
    default:
      len = build_bfc_resume(f.data(), cap, a, b, shard, static_cast<uint16_t>(rng()));
      break;
  }
  f.resize(len);
  return std::vector<uint8_t>(f.begin() + 14, f.end());  // as parse_control sees it
}

void mutate(std::mt19937& rng, std::vector<uint8_t>& f) {
  switch (rng() % 5) {
    case 0:  // flip a byte
      if (!f.empty()) f[rng() % f.size()] ^= static_cast<uint8_t>(1 + rng() % 255);
      break;
    case 1:  // truncate
      f.resize(f.empty() ? 0 : rng() % f.size());
      break;
    case 2:  // a different body length
      if (f.size() >= 6) f[4 + rng() % 2] = static_cast<uint8_t>(rng());
      break;
    case 3:  // a different count
      if (f.size() >= 10) f[8 + rng() % 2] = static_cast<uint8_t>(rng());
      break;
    default:  // trailing bytes
      f.resize(f.size() + rng() % 64, static_cast<uint8_t>(rng()));
      break;
  }
}

TEST(ControlCodecFuzz, AcceptedFramesStayInsideAndRoundTrip) {
  std::mt19937 rng(20261124);
  uint32_t accepted[6] = {};
  for (uint32_t i = 0; i < 60'000; ++i) {
    std::vector<uint8_t> f = valid_frame(rng, i);
    const uint32_t rounds = i % 3;  // some frames unmutated, some twice
    for (uint32_t r = 0; r < rounds; ++r) mutate(rng, f);
    // Exactly sized, so a sanitizer build catches any read past the end.
    std::vector<uint8_t> exact(f);
    ASSERT_TRUE(check_control_codec(exact.empty() ? nullptr : exact.data(),
                                    static_cast<uint32_t>(exact.size())))
        << "input " << i;
    ControlMessage m;
    if (parse_control(exact.data(), static_cast<uint32_t>(exact.size()), &m) ==
        ControlParseResult::kOk) {
      ++accepted[static_cast<uint8_t>(m.type) - 1];
    }
  }
  // Every type was accepted often enough for the round trip to mean something.
  for (uint32_t t = 0; t < 6; ++t) EXPECT_GT(accepted[t], 1000u) << "type " << t + 1;
}

}  // namespace
}  // namespace sluice
