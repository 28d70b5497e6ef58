// Instructions per packet of the traffic manager in the worker's pattern:
// enqueue 32 x 64-byte frames into one queue of a 32-queue DRR port with ECN
// step marking on, then dequeue_burst(32). Built by meson (build/tests/bench/
// tm_burst_bench, with the project's -march=native); for callgrind build it
// as below (valgrind cannot run AVX-512, hence x86-64-v3):
//
//   g++ -std=c++20 -O2 -DNDEBUG -march=x86-64-v3 -g -I. -o /tmp/tm_burst_bench
//       tests/bench/tm_burst_bench.cc lib/tm/*.cc   (one command line)
//   valgrind --tool=callgrind --callgrind-out-file=/tmp/tm.cg /tmp/tm_burst_bench 0 20000
//   callgrind_annotate --inclusive=yes /tmp/tm.cg | grep bench_
//
// Argument 1 is the shaper rate in b/s (0: unshaped; 100000000000: 100 Gb/s),
// argument 2 the number of bursts. Instructions per packet = the inclusive
// count of bench_enqueue or bench_dequeue / (32 x bursts). bench_enqueue's
// own loop (about 6 per packet) is included.

#include <cstdio>
#include <cstdlib>

#include "lib/tm/egress_port.h"

using namespace sluice;

// Read at run time, as the worker's queue and ECT bit are.
volatile uint16_t g_queue = 0;
volatile bool g_ecn_capable = true;

__attribute__((noinline)) unsigned bench_enqueue(EgressPort& port, uint64_t now,
                                                 const TmPacket* pkts, unsigned n) {
  unsigned ok = 0;
  for (unsigned i = 0; i < n; ++i) {
    EnqueueResult r = port.enqueue(now, g_queue, pkts[i], g_ecn_capable);
    ok += r.verdict != EnqueueVerdict::kDropped;
  }
  return ok;
}

__attribute__((noinline)) unsigned bench_dequeue(EgressPort& port, uint64_t now, TmPacket* out,
                                                 unsigned max) {
  return port.dequeue_burst(now, out, max);
}

int main(int argc, char** argv) {
  const uint64_t rate = argc > 1 ? std::strtoull(argv[1], nullptr, 10) : 0;
  const unsigned bursts = argc > 2 ? static_cast<unsigned>(std::atoi(argv[2])) : 100000;
  SharedBuffer buffer(12ull << 20, 1.0);
  EgressPortConfig cfg;
  cfg.num_queues = 32;
  cfg.scheduler = SchedulerKind::kDrr;
  cfg.rate_bps = rate;
  cfg.ecn.mode = EcnMode::kStep;
  cfg.ecn.step_k_bytes = 100000;
  EgressPort port(cfg, &buffer);
  TmPacket pkts[32], out[32];
  for (unsigned i = 0; i < 32; ++i) {
    pkts[i].handle = &pkts[i];
    pkts[i].bytes = 64;
  }
  uint64_t now = 1000, sent = 0;
  for (unsigned b = 0; b < bursts; ++b) {
    bench_enqueue(port, now, pkts, 32);
    now += 300;  // 32 x 88 wire bytes at 100 Gb/s take 225 ns
    sent += bench_dequeue(port, now, out, 32);
  }
  std::printf("dequeued %llu of %llu, %llu still queued\n", static_cast<unsigned long long>(sent),
              static_cast<unsigned long long>(bursts) * 32,
              static_cast<unsigned long long>(port.queued_packets()));
  return 0;
}
