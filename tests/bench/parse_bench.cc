// Instruction-count benchmark for parse_packet, meant for callgrind (built
// by meson as build/tests/bench/parse_bench, not a test). Parses a mix of 60-byte untagged IPv4
// UDP/TCP frames (64 bytes on the wire with FCS), as testpmd's generator and
// the benchmark in docs/benchmarks.md send them. Build and run:
//
//   g++ -std=c++20 -O2 -march=x86-64-v3 -g -I. tests/bench/parse_bench.cc -o /tmp/parse_bench
//   valgrind --tool=callgrind --callgrind-out-file=/tmp/cg.out /tmp/parse_bench
//   callgrind_annotate --inclusive=yes /tmp/cg.out | grep parse_one
//
// With the argument `vlan` the frames carry an 802.1Q tag (the general path).
// Instructions per parse = inclusive Ir of parse_one / its call count (the
// count is printed); parse_one adds only its call and return.

#include <cstdint>
#include <cstdio>
#include <string_view>
#include <vector>

#include "lib/net/packet_parser.h"
#include "tests/unit/net/test_frames.h"

namespace {

constexpr int kFrames = 256;
constexpr uint32_t kFrameLen = 60;
constexpr int kRounds = 4000;

// Out of line and not specialised (noipa), so callgrind attributes exactly one parse to each call.
[[gnu::noipa]] void parse_one(const uint8_t* data, uint32_t len, sluice::ParsedPacket* out) {
  sluice::parse_packet(data, len, out);
}

std::vector<uint8_t> make_frame(int i, bool vlan) {
  using namespace sluice::test;
  Ipv4Fields f;
  const bool tcp = (i % 4) == 3;  // mostly UDP, as the load generator sends
  f.proto = tcp ? 6 : 17;
  f.tos = static_cast<uint8_t>((i % 3) == 0 ? 0x00 : 0x02);
  f.id = static_cast<uint16_t>(i * 7919);
  f.ttl = static_cast<uint8_t>(64 - (i % 8));
  f.src = 0x0A000000u | static_cast<uint32_t>(i + 1);
  f.dst =
      0x0A010000u | static_cast<uint32_t>((i * 37) & 0xFF00) | static_cast<uint32_t>(i % 250 + 1);
  f.payload.assign(kFrameLen - (vlan ? 18 : 14) - 20, 0);
  f.payload[0] = static_cast<uint8_t>(0x80 | i);
  f.payload[1] = static_cast<uint8_t>(i * 13);
  f.payload[2] = 0x13;
  f.payload[3] = static_cast<uint8_t>(0x89 + (i & 1));
  Bytes b = cat({vlan ? ethernet(0x0800, {{0x8100, 100}}) : ethernet(0x0800), ipv4(f)});
  b.resize(kFrameLen, 0);
  return b;
}

}  // namespace

int main(int argc, char** argv) {
  const bool vlan = argc > 1 && std::string_view(argv[1]) == "vlan";  // general path
  std::vector<uint8_t> pool(kFrames * 64);
  for (int i = 0; i < kFrames; ++i) {
    const std::vector<uint8_t> f = make_frame(i, vlan);
    std::copy(f.begin(), f.end(), pool.begin() + i * 64);
  }
  uint64_t forwarded = 0, check = 0;
  for (int r = 0; r < kRounds; ++r) {
    for (int i = 0; i < kFrames; ++i) {
      sluice::ParsedPacket p;
      parse_one(pool.data() + i * 64, kFrameLen, &p);
      forwarded += p.kind == sluice::PacketKind::kIpv4;
      check += p.src_port ^ p.dst_port ^ p.dst_ip ^ p.tos ^ p.ip_total_len;
    }
  }
  std::printf("parses %d forwarded %llu check %llu\n", kFrames * kRounds,
              static_cast<unsigned long long>(forwarded), static_cast<unsigned long long>(check));
  return forwarded == static_cast<uint64_t>(kFrames) * kRounds ? 0 : 1;  // all forwarded
}
