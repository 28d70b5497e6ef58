// Replays every libFuzzer target's check (tests/fuzz/*_check.h) on its seed
// corpus (tests/fuzz/corpus/<target>/) and on a fixed set of mutations of
// those seeds, so that every CI run exercises every parser and codec the
// fuzz targets cover without clang or libFuzzer. Each input is an
// exactly-sized heap copy, so the sanitizer build (tools/test --sanitize)
// reports any read past the end. A fixed seed per target keeps a failure
// reproducible; the failing input is written to the test log in hex.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <ostream>
#include <random>
#include <set>
#include <string>
#include <vector>

#include "tests/fuzz/config_check.h"
#include "tests/fuzz/control_codec_check.h"
#include "tests/fuzz/flowtune_codec_check.h"
#include "tests/fuzz/parser_check.h"
#include "tests/fuzz/pause_check.h"
#include "tests/fuzz/pcap_check.h"
#include "tests/fuzz/shim_check.h"
#include "tests/fuzz/transport_check.h"

#ifndef SLUICE_FUZZ_CORPUS_DIR
#error "SLUICE_FUZZ_CORPUS_DIR must name tests/fuzz/corpus (tests/meson.build sets it)"
#endif

namespace sluice {
namespace {

namespace fs = std::filesystem;

using Check = bool (*)(const uint8_t*, uint32_t);

struct Target {
  const char* name;  // the corpus directory and the fuzz target's prefix
  Check check;
  uint32_t mutations;  // mutated inputs per seed
};

// Every libFuzzer target in tests/fuzz/meson.build, with its check.
const Target kTargets[] = {
    {"parser", check_parser, 3000},
    {"control", check_control_codec, 3000},
    {"flowtune", check_flowtune_codec, 3000},
    {"shim", check_data_shim, 3000},
    {"pause", check_pause_codec, 3000},
    {"pcap", check_pcap_reader, 3000},
    {"transport", check_transport_frame, 3000},
    {"config", check_config_loader, 150},  // a whole configuration load each
};

// gtest names the target in a failure, not its bytes.
void PrintTo(const Target& t, std::ostream* os) { *os << t.name; }

fs::path corpus_root() { return fs::path(SLUICE_FUZZ_CORPUS_DIR); }

std::vector<uint8_t> read_all(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  return std::vector<uint8_t>(std::istreambuf_iterator<char>(in), {});
}

std::vector<std::vector<uint8_t>> seeds(const char* target) {
  std::vector<fs::path> files;
  for (const auto& e : fs::directory_iterator(corpus_root() / target)) {
    if (e.is_regular_file()) files.push_back(e.path());
  }
  std::sort(files.begin(), files.end());  // a fixed order for a fixed sequence
  std::vector<std::vector<uint8_t>> out;
  for (const auto& f : files) out.push_back(read_all(f));
  return out;
}

std::string hex(const std::vector<uint8_t>& b) {
  static const char* digits = "0123456789abcdef";
  std::string s;
  for (uint8_t c : b) {
    s += digits[c >> 4];
    s += digits[c & 15];
  }
  return s;
}

bool run(Check check, const std::vector<uint8_t>& input) {
  std::vector<uint8_t> exact(input);  // exactly sized, for ASan
  exact.shrink_to_fit();
  return check(exact.empty() ? nullptr : exact.data(), static_cast<uint32_t>(exact.size()));
}

// Bytes that make length, count and type fields interesting.
constexpr uint8_t kInteresting[] = {0x00, 0x01, 0x02, 0x06, 0x08, 0x14, 0x3a, 0x40,
                                    0x7f, 0x80, 0x81, 0x88, 0xb6, 0xfe, 0xff};
// Characters that change YAML's structure.
constexpr char kYamlChars[] = ":-[]{},&*!|>#'\"\n \t?%@`0";

void mutate(std::mt19937& rng, std::vector<uint8_t>& b, const std::vector<uint8_t>& other) {
  const auto pos = [&](size_t extra) {
    return b.empty() && extra == 0 ? 0 : rng() % (b.size() + extra);
  };
  switch (rng() % 9) {
    case 0:  // flip bits of a byte
      if (!b.empty()) b[pos(0)] ^= static_cast<uint8_t>(1 + rng() % 255);
      break;
    case 1:  // an interesting byte
      if (!b.empty()) b[pos(0)] = kInteresting[rng() % sizeof kInteresting];
      break;
    case 2:  // truncate
      b.resize(b.empty() ? 0 : rng() % b.size());
      break;
    case 3:  // insert random bytes
      b.insert(b.begin() + static_cast<std::ptrdiff_t>(pos(1)), 1 + rng() % 16,
               static_cast<uint8_t>(rng()));
      break;
    case 4:  // erase a range
      if (!b.empty()) {
        const size_t at = pos(0);
        const size_t n = std::min<size_t>(1 + rng() % 16, b.size() - at);
        b.erase(b.begin() + static_cast<std::ptrdiff_t>(at),
                b.begin() + static_cast<std::ptrdiff_t>(at + n));
      }
      break;
    case 5:  // a 16-bit field set to a boundary value
      if (b.size() >= 2) {
        const size_t at = rng() % (b.size() - 1);
        const uint16_t v[] = {0, 1, 0x7fff, 0x8000, 0xffff, static_cast<uint16_t>(b.size())};
        b[at] = static_cast<uint8_t>(v[rng() % 6] >> 8);
        b[at + 1] = static_cast<uint8_t>(v[rng() % 6]);
      }
      break;
    case 6:  // a YAML structural character
      if (!b.empty()) b[pos(0)] = static_cast<uint8_t>(kYamlChars[rng() % (sizeof kYamlChars - 1)]);
      break;
    case 7:  // duplicate a chunk
      if (!b.empty()) {
        const size_t at = pos(0);
        const size_t n = std::min<size_t>(1 + rng() % 64, b.size() - at);
        std::vector<uint8_t> chunk(b.begin() + static_cast<std::ptrdiff_t>(at),
                                   b.begin() + static_cast<std::ptrdiff_t>(at + n));
        b.insert(b.begin() + static_cast<std::ptrdiff_t>(pos(1)), chunk.begin(), chunk.end());
      }
      break;
    default:  // splice: this seed's head, another seed's tail
      if (!other.empty()) {
        b.resize(pos(1));
        b.insert(b.end(), other.begin() + static_cast<std::ptrdiff_t>(rng() % other.size()),
                 other.end());
      }
      break;
  }
}

class FuzzCorpus : public ::testing::TestWithParam<Target> {};

TEST_P(FuzzCorpus, SeedsPassTheCheck) {
  const Target& t = GetParam();
  const auto corpus = seeds(t.name);
  ASSERT_GE(corpus.size(), 3u) << "tests/fuzz/corpus/" << t.name << " needs seeds";
  for (const auto& s : corpus) EXPECT_TRUE(run(t.check, s)) << t.name << " seed " << hex(s);
}

TEST_P(FuzzCorpus, MutatedSeedsPassTheCheck) {
  const Target& t = GetParam();
  const auto corpus = seeds(t.name);
  ASSERT_FALSE(corpus.empty());
  std::mt19937 rng(20261125u ^ static_cast<uint32_t>(std::hash<std::string>{}(t.name)));
  for (size_t i = 0; i < corpus.size(); ++i) {
    for (uint32_t m = 0; m < t.mutations; ++m) {
      std::vector<uint8_t> b = corpus[i];
      const uint32_t rounds = 1 + m % 4;  // one to four mutations stacked
      for (uint32_t r = 0; r < rounds; ++r) mutate(rng, b, corpus[rng() % corpus.size()]);
      ASSERT_TRUE(run(t.check, b))
          << t.name << " seed " << i << " mutation " << m << ": " << hex(b);
    }
  }
}

INSTANTIATE_TEST_SUITE_P(Targets, FuzzCorpus, ::testing::ValuesIn(kTargets),
                         [](const auto& info) { return std::string(info.param.name); });

// Every corpus directory belongs to a target replayed above and every target
// has one, so a new fuzz target cannot be added without its replay.
TEST(FuzzCorpusLayout, EveryCorpusDirectoryIsReplayed) {
  std::set<std::string> dirs, targets;
  for (const auto& e : fs::directory_iterator(corpus_root())) {
    if (e.is_directory()) dirs.insert(e.path().filename().string());
  }
  for (const Target& t : kTargets) targets.insert(t.name);
  EXPECT_EQ(dirs, targets);
}

}  // namespace
}  // namespace sluice
