// ned-bench: microseconds per NED iteration of the Flowtune allocator
// (lib/mechanisms/flowtune/ned_allocator.h) against the number of servers, links and
// flows, on one pinned core (issue 13 item 6; docs/benchmarks.md, "Flowtune
// allocator").
//
// For each size a two-tier leaf-spine fabric (16 servers per rack, 4 spines,
// leaf-spine links at 4x a host link: full bisection) is built in two models:
// the full-path model (host up/down + leaf-spine links, paths of 2 or 4
// links) and one-big-switch (host up/down only, paths of 2 links). Each
// server sources --flows-per-server flows to uniformly random other servers,
// the spine drawn at random (the network's ECMP choice). Three variants are
// timed per iteration, after a warm-up:
//   iterate      iterate() alone
//   iter+norm    iterate() + normalise(F-NORM) + collect_notices()
//   churn        --churn-percent of the flows removed and as many new ones
//                added, then iterate() + normalise(F-NORM) + collect_notices()
// Single thread only: the paper's FlowBlock/LinkBlock decomposition is not
// implemented.
//
//   ned-bench [--cpu N] [--sizes 384,1536,4608] [--flows-per-server F]
//             [--iterations I] [--warmup W] [--churn-percent P] [--seed S]

#include <sched.h>
#include <time.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <random>
#include <string>
#include <vector>

#include "lib/mechanisms/flowtune/flow_path.h"
#include "lib/mechanisms/flowtune/leaf_spine.h"
#include "lib/mechanisms/flowtune/ned_allocator.h"
#include "lib/mechanisms/flowtune/one_big_switch.h"

namespace {

using sluice::flowtune::FlowId;
using sluice::flowtune::FlowPath;
using sluice::flowtune::kInvalidFlow;
using sluice::flowtune::LeafSpine;
using sluice::flowtune::LeafSpineShape;
using sluice::flowtune::NedAllocator;
using sluice::flowtune::NedConfig;
using sluice::flowtune::NormMode;
using sluice::flowtune::OneBigSwitch;
using sluice::flowtune::RateNotice;

constexpr uint32_t kHostsPerLeaf = 16;
constexpr uint32_t kSpines = 4;
constexpr double kFabricCapacity = 4.0;  // 16 hosts / 4 spines: full bisection

struct Options {
  int cpu = 0;
  std::vector<uint32_t> sizes{384, 1536, 4608};
  uint32_t flows_per_server = 4;
  uint32_t iterations = 2000;
  uint32_t warmup = 200;
  double churn_percent = 2.0;
  uint64_t seed = 1;
};

uint64_t now_ns() {
  timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return uint64_t(ts.tv_sec) * 1'000'000'000 + uint64_t(ts.tv_nsec);
}

bool parse_u64(const char* s, uint64_t* out) {
  char* end = nullptr;
  errno = 0;
  const unsigned long long v = std::strtoull(s, &end, 10);
  if (errno != 0 || end == s || *end != '\0') return false;
  *out = v;
  return true;
}

bool parse(int argc, char** argv, Options* o) {
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    if (i + 1 >= argc) return false;
    const char* v = argv[++i];
    uint64_t n = 0;
    if (a == "--sizes") {
      o->sizes.clear();
      std::string s = v;
      size_t pos = 0;
      while (pos <= s.size()) {
        const size_t comma = s.find(',', pos);
        const std::string item = s.substr(pos, comma == std::string::npos ? std::string::npos : comma - pos);
        if (!parse_u64(item.c_str(), &n) || n == 0 || n % kHostsPerLeaf != 0 || n > 1'000'000) return false;
        o->sizes.push_back(static_cast<uint32_t>(n));
        if (comma == std::string::npos) break;
        pos = comma + 1;
      }
    } else if (a == "--churn-percent") {
      char* end = nullptr;
      const double d = std::strtod(v, &end);
      if (*end != '\0' || !(d >= 0 && d <= 100)) return false;
      o->churn_percent = d;
    } else if (!parse_u64(v, &n)) {
      return false;
    } else if (a == "--cpu") {
      o->cpu = static_cast<int>(n);
    } else if (a == "--flows-per-server" && n >= 1 && n <= 1024) {
      o->flows_per_server = static_cast<uint32_t>(n);
    } else if (a == "--iterations" && n >= 1 && n <= 10'000'000) {
      o->iterations = static_cast<uint32_t>(n);
    } else if (a == "--warmup" && n <= 10'000'000) {
      o->warmup = static_cast<uint32_t>(n);
    } else if (a == "--seed") {
      o->seed = n;
    } else {
      return false;
    }
  }
  return !o->sizes.empty();
}

std::string cpu_model() {
  std::ifstream f("/proc/cpuinfo");
  std::string line;
  while (std::getline(f, line)) {
    if (line.rfind("model name", 0) == 0) {
      const size_t c = line.find(':');
      if (c != std::string::npos) return line.substr(c + 2);
    }
  }
  return "unknown";
}

// One topology model over `servers` hosts: builds links and draws paths.
struct Fabric {
  bool full_path;
  uint32_t servers;
  NedAllocator alloc;
  LeafSpine* ls = nullptr;
  OneBigSwitch* obs = nullptr;

  Fabric(bool full, uint32_t n, uint32_t max_flows)
      : full_path(full), servers(n), alloc(NedConfig{.max_flows = max_flows, .max_links = links_for(full, n)}) {}
  ~Fabric() {
    delete ls;
    delete obs;
  }
  static uint32_t links_for(bool full, uint32_t n) {
    return 2 * n + (full ? 2 * (n / kHostsPerLeaf) * kSpines : 0);
  }
  bool build() {
    if (full_path) {
      ls = new LeafSpine(alloc, LeafSpineShape{.leaves = servers / kHostsPerLeaf,
                                               .spines = kSpines,
                                               .hosts_per_leaf = kHostsPerLeaf,
                                               .host_capacity = 1,
                                               .fabric_capacity = kFabricCapacity});
      return ls->ok();
    }
    obs = new OneBigSwitch(alloc, servers, 1);
    return obs->ok();
  }
  FlowPath path(uint32_t src, std::mt19937_64& rng) {
    uint32_t dst = static_cast<uint32_t>(rng() % (servers - 1));
    if (dst >= src) ++dst;
    if (full_path) return ls->path(src, dst, static_cast<uint32_t>(rng() % kSpines));
    return obs->path(src, dst);
  }
};

struct Stats {
  double median_us = 0;
  double p99_us = 0;
  double mean_notices = 0;
};

Stats summarise(std::vector<uint64_t>& ns, uint64_t notices) {
  std::sort(ns.begin(), ns.end());
  Stats s;
  s.median_us = double(ns[ns.size() / 2]) / 1000.0;
  size_t i99 = (ns.size() * 99 + 99) / 100;
  if (i99 > 0) --i99;
  s.p99_us = double(ns[std::min(i99, ns.size() - 1)]) / 1000.0;
  s.mean_notices = double(notices) / double(ns.size());
  return s;
}

enum class Variant { kIterate, kIterNorm, kChurn };
const char* variant_name(Variant v) {
  switch (v) {
    case Variant::kIterate: return "iterate";
    case Variant::kIterNorm: return "iter+norm";
    case Variant::kChurn: return "churn";
  }
  return "?";
}

// Runs one (size, model, variant) cell on a fresh allocator; false on a
// setup failure.
bool run_cell(const Options& o, uint32_t servers, bool full, Variant variant, uint32_t* links, uint32_t* flows,
              Stats* out) {
  const uint32_t nflows = servers * o.flows_per_server;
  Fabric fab(full, servers, nflows + 16);
  if (!fab.build()) return false;
  std::mt19937_64 rng(o.seed * 1'000'003 + servers * 2 + (full ? 1 : 0));
  std::vector<FlowId> ids;
  std::vector<uint32_t> src_of;
  ids.reserve(nflows);
  src_of.reserve(nflows);
  for (uint32_t s = 0; s < servers; ++s) {
    for (uint32_t k = 0; k < o.flows_per_server; ++k) {
      const FlowPath p = fab.path(s, rng);
      const FlowId f = fab.alloc.add_flow(1.0, p.view());
      if (f == kInvalidFlow) return false;
      ids.push_back(f);
      src_of.push_back(s);
    }
  }
  std::vector<RateNotice> notices(nflows + 16);
  const uint32_t churn = variant == Variant::kChurn
                             ? std::max<uint32_t>(1, static_cast<uint32_t>(nflows * o.churn_percent / 100.0 + 0.5))
                             : 0;
  std::vector<uint64_t> ns;
  ns.reserve(o.iterations);
  uint64_t notice_total = 0;
  // Random choices for churn are drawn before the clock starts.
  std::vector<uint32_t> victims(churn);
  std::vector<FlowPath> fresh(churn);
  for (uint32_t it = 0; it < o.warmup + o.iterations; ++it) {
    for (uint32_t c = 0; c < churn; ++c) {
      victims[c] = static_cast<uint32_t>(rng() % nflows);
      fresh[c] = fab.path(src_of[victims[c]], rng);
    }
    const uint64_t t0 = now_ns();
    for (uint32_t c = 0; c < churn; ++c) {
      const uint32_t v = victims[c];
      fab.alloc.remove_flow(ids[v]);
      ids[v] = fab.alloc.add_flow(1.0, fresh[c].view());
    }
    fab.alloc.iterate();
    uint32_t n = 0;
    if (variant != Variant::kIterate) {
      fab.alloc.normalise(NormMode::kFNorm);
      n = fab.alloc.collect_notices(notices);
    }
    const uint64_t t1 = now_ns();
    if (it >= o.warmup) {
      ns.push_back(t1 - t0);
      notice_total += n;
    }
  }
  for (FlowId f : ids) {
    if (f == kInvalidFlow) return false;  // a churned add failed
  }
  *links = fab.alloc.link_count();
  *flows = fab.alloc.flow_count();
  *out = summarise(ns, notice_total);
  return true;
}

}  // namespace

int main(int argc, char** argv) {
  Options o;
  if (!parse(argc, argv, &o)) {
    std::fprintf(stderr,
                 "usage: ned-bench [--cpu N] [--sizes 384,1536,4608 (multiples of %u)] "
                 "[--flows-per-server F] [--iterations I] [--warmup W] [--churn-percent P] [--seed S]\n",
                 kHostsPerLeaf);
    return 2;
  }
  cpu_set_t set;
  CPU_ZERO(&set);
  CPU_SET(o.cpu, &set);
  if (sched_setaffinity(0, sizeof set, &set) != 0) {
    std::fprintf(stderr, "ned-bench: cannot pin to cpu %d: %s\n", o.cpu, std::strerror(errno));
    return 1;
  }
  std::printf("machine: %s, %ld CPUs online, pinned to cpu %d, single thread\n", cpu_model().c_str(),
              sysconf(_SC_NPROCESSORS_ONLN), o.cpu);
  std::printf("fabric: leaf-spine, %u servers per rack, %u spines, leaf-spine links %.0fx a host link; "
              "%u flows per server to uniform random servers, weight 1; %u iterations after %u warm-up; "
              "churn %.1f%% of flows per iteration\n\n",
              kHostsPerLeaf, kSpines, kFabricCapacity, o.flows_per_server, o.iterations, o.warmup,
              o.churn_percent);
  std::printf("| servers | model | links | flows | variant | median µs | p99 µs | notices/iter |\n");
  std::printf("|---|---|---|---|---|---|---|---|\n");
  std::fflush(stdout);
  for (uint32_t servers : o.sizes) {
    for (bool full : {true, false}) {
      for (Variant v : {Variant::kIterate, Variant::kIterNorm, Variant::kChurn}) {
        uint32_t links = 0, flows = 0;
        Stats s;
        if (!run_cell(o, servers, full, v, &links, &flows, &s)) {
          std::fprintf(stderr, "ned-bench: setup failed for %u servers\n", servers);
          return 1;
        }
        std::printf("| %u | %s | %u | %u | %s | %.2f | %.2f | %.1f |\n", servers, full ? "full-path" : "one-big-switch",
                    links, flows, variant_name(v), s.median_us, s.p99_us, s.mean_notices);
        std::fflush(stdout);
      }
    }
  }
  return 0;
}
