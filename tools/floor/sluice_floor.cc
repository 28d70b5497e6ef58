// sluice-floor: the machine's own timing floor on one core. A busy loop pinned
// to the core reads CLOCK_MONOTONIC back to back, as a worker lcore's loop
// reads its clock, and records every gap between two reads. Gaps come from
// the machine (interrupts, the hypervisor, other tasks on the core), never
// from sluice, so they are the floor a run's loop gaps and lateness are read
// against (docs/testbed.md, "The machine's floor").
//
//   sluice-floor [--cpu N] [--seconds S] [--json]

#include <sched.h>
#include <unistd.h>
#include <time.h>

#include <cerrno>
#include <cinttypes>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>

#include "lib/common/cpu_steal.h"
#include "lib/tm/latency_histogram.h"

namespace {

struct Options {
  int cpu = -1;  // -1: the last online CPU
  double seconds = 2.0;
  bool json = false;
};

uint64_t monotonic_ns() {
  timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return uint64_t(ts.tv_sec) * 1'000'000'000 + uint64_t(ts.tv_nsec);
}

bool parse(int argc, char** argv, Options* o) {
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    if (a == "--json") {
      o->json = true;
    } else if ((a == "--cpu" || a == "--seconds") && i + 1 < argc) {
      char* end = nullptr;
      const double v = std::strtod(argv[++i], &end);
      if (*end != '\0' || v < 0) return false;
      if (a == "--cpu") o->cpu = static_cast<int>(v);
      else o->seconds = v;
    } else {
      return false;
    }
  }
  return o->seconds > 0 && o->seconds <= 600;
}

struct Gaps {
  sluice::LatencyHistogram hist;
  uint64_t loops = 0, max_ns = 0, over_10us = 0, over_50us = 0, over_200us = 0;
};

void measure(double seconds, Gaps* g) {
  const uint64_t end = monotonic_ns() + static_cast<uint64_t>(seconds * 1e9);
  uint64_t prev = monotonic_ns();
  while (prev < end) {
    const uint64_t now = monotonic_ns();
    const uint64_t gap = now - prev;
    g->hist.record(gap);
    ++g->loops;
    if (gap > g->max_ns) g->max_ns = gap;
    g->over_10us += gap > 10'000;
    g->over_50us += gap > 50'000;
    g->over_200us += gap > 200'000;
    prev = now;
  }
}

}  // namespace

int main(int argc, char** argv) {
  Options o;
  if (!parse(argc, argv, &o)) {
    std::fprintf(stderr, "usage: sluice-floor [--cpu N] [--seconds S (0-600]] [--json]\n");
    return 2;
  }
  if (o.cpu < 0) o.cpu = static_cast<int>(sysconf(_SC_NPROCESSORS_ONLN)) - 1;
  cpu_set_t set;
  CPU_ZERO(&set);
  CPU_SET(o.cpu, &set);
  if (sched_setaffinity(0, sizeof set, &set) != 0) {
    std::fprintf(stderr, "sluice-floor: cannot pin to cpu %d: %s\n", o.cpu, std::strerror(errno));
    return 1;
  }
  static Gaps g;  // the histogram's counters are large; not on the stack
  const auto steal_before = sluice::cpu_steal_ns(static_cast<unsigned>(o.cpu));
  measure(o.seconds, &g);
  const auto steal_after = sluice::cpu_steal_ns(static_cast<unsigned>(o.cpu));
  // -1: the kernel does not say (no /proc/stat line).
  const double steal_ms =
      steal_before && steal_after ? (*steal_after - *steal_before) / 1e6 : -1.0;
  const double per_s = 1.0 / o.seconds;
  if (o.json) {
    std::printf("{\"cpu\": %d, \"seconds\": %.3f, \"loops\": %" PRIu64 ", \"max_gap_ns\": %" PRIu64
                ", \"gap_p99_ns\": %" PRIu64 ", \"gap_p999_ns\": %" PRIu64
                ", \"gaps_over_10us\": %" PRIu64 ", \"gaps_over_50us\": %" PRIu64
                ", \"gaps_over_200us\": %" PRIu64 ", \"steal_ms\": %.1f}\n",
                o.cpu, o.seconds, g.loops, g.max_ns, sluice::quantile_upper_ns(g.hist, 0.99),
                sluice::quantile_upper_ns(g.hist, 0.999), g.over_10us, g.over_50us, g.over_200us, steal_ms);
  } else {
    std::printf("machine floor on cpu %d (%.1f s busy loop, %" PRIu64
                " clock reads): gaps >10 us %.1f/s, >50 us %.1f/s, >200 us %.1f/s, max %.1f us; "
                "hypervisor steal %.1f ms\n",
                o.cpu, o.seconds, g.loops, g.over_10us * per_s, g.over_50us * per_s,
                g.over_200us * per_s, g.max_ns / 1e3, steal_ms);
  }
  return 0;
}
