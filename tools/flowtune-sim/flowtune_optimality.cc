// flowtune-optimality: the offline optimality experiment of the Flowtune
// paper (NSDI 2017, §5 "(M) Normalizer performance", Figure 17) on the
// library in lib/mechanisms/flowtune/. docs/mechanisms/flowtune.md ("Optimality").
//
// Setting (paper §5.3): a two-tier fabric of 4 spines and 9 racks of 16
// servers, 10 Gbit/s server links (capacity unit: 1 = 10 Gbit/s; a
// leaf-spine link is 4, full bisection), flowlets arriving Poisson at a load
// (fraction of server capacity) between uniformly random servers, sizes from
// a flow-size CDF (default: web search), one allocator iteration per 10 µs.
//
// Each step: arrivals are added to every optimiser; NED (the library, γ 0.4)
// and a plain gradient method (p ← max(0, p + γ'·G), in this file) each do
// one iteration; both normalisations (F-NORM, U-NORM) are read from the
// same optimiser state (normalisation is output-only); flowlets progress at
// NED's F-NORM rates and leave when their bytes are done. Every K steps a
// separate NED instance holding the same flows (warm-started from its own
// previous prices) is iterated until the KKT conditions of the
// proportional-fairness problem hold to a tolerance: that is "the optimum".
// Throughput = sum of rates; ratio = throughput / optimal throughput, where
// the optimum is taken at the same (1 − threshold)·c the normalisation
// targets (log utility is scale-homogeneous, so that is (1 − t)·opt(c)).
//
//   flowtune-optimality [--steps N] [--load L] [--seed S] [--cdf FILE]
//                       [--every K] [--warmup N] [--topology leafspine|obs]
//                       [--gamma G] [--grad-step G] [--threshold T]
//                       [--tol E] [--out FILE.csv]

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <random>
#include <string>
#include <utility>
#include <vector>

#include "lib/mechanisms/flowtune/flow_path.h"
#include "lib/mechanisms/flowtune/leaf_spine.h"
#include "lib/mechanisms/flowtune/ned_allocator.h"
#include "lib/mechanisms/flowtune/one_big_switch.h"

#ifndef SLUICE_SOURCE_ROOT
#define SLUICE_SOURCE_ROOT "."
#endif

namespace {

using namespace sluice::flowtune;

constexpr uint32_t kSpines = 4;
constexpr uint32_t kRacks = 9;
constexpr uint32_t kHostsPerRack = 16;
constexpr double kHostBytesPerSecond = 10e9 / 8;  // 10 Gbit/s
constexpr double kStepSeconds = 10e-6;            // one iteration per 10 µs
constexpr uint32_t kMaxFlows = 1 << 16;

struct Options {
  uint64_t steps = 100000;  // 1 s simulated
  double load = 0.6;
  uint64_t seed = 1;
  std::string cdf = SLUICE_SOURCE_ROOT "/conf/workloads/websearch.cdf";
  uint64_t every = 10;
  uint64_t warmup = 5000;  // 50 ms, not recorded
  bool leafspine = true;
  double gamma = kDefaultGamma;
  double grad_step = 0.05;  // best F-NORM mean of {0.005 .. 0.2} at load 0.6
  double threshold = kDefaultThreshold;
  double tol = 1e-6;
  std::string out;
};

bool parse(int argc, char** argv, Options* o) {
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    if (i + 1 >= argc) {
      std::fprintf(stderr, "missing value after %s\n", a.c_str());
      return false;
    }
    const char* v = argv[++i];
    if (a == "--steps") o->steps = std::strtoull(v, nullptr, 10);
    else if (a == "--load") o->load = std::atof(v);
    else if (a == "--seed") o->seed = std::strtoull(v, nullptr, 10);
    else if (a == "--cdf") o->cdf = v;
    else if (a == "--every") o->every = std::strtoull(v, nullptr, 10);
    else if (a == "--warmup") o->warmup = std::strtoull(v, nullptr, 10);
    else if (a == "--gamma") o->gamma = std::atof(v);
    else if (a == "--grad-step") o->grad_step = std::atof(v);
    else if (a == "--threshold") o->threshold = std::atof(v);
    else if (a == "--tol") o->tol = std::atof(v);
    else if (a == "--out") o->out = v;
    else if (a == "--topology") {
      const std::string t = v;
      if (t != "leafspine" && t != "obs") {
        std::fprintf(stderr, "--topology: leafspine or obs\n");
        return false;
      }
      o->leafspine = t == "leafspine";
    } else {
      std::fprintf(stderr, "unknown option %s\n", a.c_str());
      return false;
    }
  }
  if (o->every == 0 || !(o->load > 0) || !(o->threshold >= 0 && o->threshold < 1)) {
    std::fprintf(stderr, "bad --every, --load or --threshold\n");
    return false;
  }
  return true;
}

// Flow-size CDF, "size_bytes cumulative_percent" per line, '#' comments;
// sampled by linear interpolation between points.
struct SizeCdf {
  std::vector<std::pair<double, double>> pts;  // (size, cumulative fraction)

  bool load(const std::string& path) {
    FILE* f = std::fopen(path.c_str(), "r");
    if (!f) return false;
    char line[256];
    while (std::fgets(line, sizeof line, f)) {
      double s, p;
      if (line[0] == '#') continue;
      if (std::sscanf(line, "%lf %lf", &s, &p) == 2) pts.emplace_back(s, p / 100.0);
    }
    std::fclose(f);
    return pts.size() >= 2 && pts.back().second > 0.999;
  }
  double mean() const {
    double m = pts.front().first * pts.front().second;
    for (size_t i = 1; i < pts.size(); ++i) {
      m += (pts[i].second - pts[i - 1].second) * (pts[i].first + pts[i - 1].first) / 2;
    }
    return m;
  }
  double sample(double u) const {
    if (u <= pts.front().second) return pts.front().first;
    for (size_t i = 1; i < pts.size(); ++i) {
      if (u <= pts[i].second) {
        const double span = pts[i].second - pts[i - 1].second;
        const double t = span > 0 ? (u - pts[i - 1].second) / span : 1;
        return pts[i - 1].first + t * (pts[i].first - pts[i - 1].first);
      }
    }
    return pts.back().first;
  }
};

// The plain gradient method (paper §5 "Gradient"): the same rate update as
// NED, price update p ← max(0, p + γ'·G_l) with a fixed step; the same
// F-NORM / U-NORM output. Mirrors the NED library's flow table.
class Gradient {
 public:
  Gradient(double step, double threshold) : step_(step), headroom_(1 - threshold) {}
  void add_link(double c) { links_.push_back(Link{c, 1, 0, 0}); }
  void add_flow(FlowId id, const FlowPath& p) {
    if (id >= flows_.size()) flows_.resize(id + 1);
    flows_[id] = Flow{p, 0, true};
    flows_[id].x = rate(flows_[id]);
    for (LinkId l : p.view()) {
      links_[l].sum += flows_[id].x;
      ++links_[l].flows;
    }
  }
  void remove_flow(FlowId id) {
    Flow& f = flows_[id];
    for (LinkId l : f.path.view()) {
      --links_[l].flows;
      links_[l].sum = links_[l].flows == 0 ? 0 : std::max(0.0, links_[l].sum - f.x);
    }
    f.live = false;
  }
  void iterate(const std::vector<FlowId>& live) {
    for (Link& l : links_) l.sum = 0;
    for (FlowId id : live) {
      Flow& f = flows_[id];
      f.x = rate(f);
      for (LinkId l : f.path.view()) links_[l].sum += f.x;
    }
    for (Link& l : links_) {
      if (l.flows > 0) l.price = std::max(0.0, l.price + step_ * (l.sum - l.c));
    }
  }
  // Throughput of both outputs over `live`.
  std::pair<double, double> normalised_throughput(const std::vector<FlowId>& live) const {
    double r_max = 0;
    for (const Link& l : links_) {
      if (l.flows > 0) r_max = std::max(r_max, l.sum / (headroom_ * l.c));
    }
    double f_thr = 0, u_thr = 0;
    for (FlowId id : live) {
      const Flow& f = flows_[id];
      double r = 0;
      for (LinkId l : f.path.view()) r = std::max(r, links_[l].sum / (headroom_ * links_[l].c));
      if (r > 0) f_thr += f.x / r;
      if (r_max > 0) u_thr += f.x / r_max;
    }
    return {f_thr, u_thr};
  }

 private:
  struct Link {
    double c, price, sum;
    uint32_t flows;
  };
  struct Flow {
    FlowPath path;
    double x;
    bool live;
  };
  double rate(const Flow& f) const {
    double sp = 0, mc = 0;
    for (uint32_t i = 0; i < f.path.size; ++i) {
      const Link& l = links_[f.path.links[i]];
      sp += l.price;
      mc = i == 0 ? l.c : std::min(mc, l.c);
    }
    return sp > 0 ? 1.0 / sp : mc;  // weight 1
  }
  double step_;
  double headroom_;
  std::vector<Link> links_;
  std::vector<Flow> flows_;
};

struct Flowlet {
  FlowId ned, opt, grad;
  double remaining;  // bytes
};

// Iterates `opt` until every link with flows is within tol·c of its capacity
// or, below it, has price 0 (the proportional-fairness KKT conditions; rates
// x = 1/Σp are exact given prices). Returns the iterations, or -1 when
// max_iters ran out.
int converge(NedAllocator& opt, uint32_t links, double tol, int max_iters) {
  for (int it = 1; it <= max_iters; ++it) {
    // After iterate(), rates and sums belong to the prices before the
    // update, and the update is a function of the same sums: when the check
    // below passes, those rates (read by rate()) are the checked optimum.
    opt.iterate();
    bool ok = true;
    for (LinkId l = 0; l < links && ok; ++l) {
      if (opt.link_flows(l) == 0) continue;
      const double c = opt.capacity(l);
      const double s = opt.link_sum(l);
      if (s > c * (1 + tol)) ok = false;
      else if (s < c * (1 - tol) && opt.price(l) > 0) ok = false;
    }
    if (ok) return it;
  }
  return -1;
}

struct Stats {
  std::vector<double> v;
  void add(double x) { v.push_back(x); }
  double mean() const {
    double s = 0;
    for (double x : v) s += x;
    return v.empty() ? 0 : s / double(v.size());
  }
  double pct(double p) {
    if (v.empty()) return 0;
    std::sort(v.begin(), v.end());
    const size_t i = std::min(v.size() - 1, size_t(p / 100.0 * double(v.size() - 1) + 0.5));
    return v[i];
  }
  double above_one() const {
    size_t n = 0;
    for (double x : v) n += x > 1 + 1e-9;
    return v.empty() ? 0 : double(n) / double(v.size());
  }
};

}  // namespace

int main(int argc, char** argv) {
  Options o;
  if (!parse(argc, argv, &o)) return 2;
  SizeCdf cdf;
  if (!cdf.load(o.cdf)) {
    std::fprintf(stderr, "cannot read CDF %s\n", o.cdf.c_str());
    return 2;
  }
  const uint32_t hosts = kRacks * kHostsPerRack;
  const uint32_t n_links = 2 * hosts + 2 * kRacks * kSpines + (o.leafspine ? 0 : 2 * hosts);
  NedConfig cfg{kMaxFlows, n_links, o.gamma, o.threshold};
  NedAllocator ned(cfg);
  NedAllocator opt(NedConfig{kMaxFlows, n_links, o.gamma, 0.0});
  Gradient grad(o.grad_step, o.threshold);

  // Identical link ids in all three: the builders add links in one order.
  LeafSpineShape shape{kRacks, kSpines, kHostsPerRack, 1.0,
                       double(kHostsPerRack) / double(kSpines)};
  LeafSpine ls_ned(ned, shape), ls_opt(opt, shape);
  OneBigSwitch obs_ned(ned, o.leafspine ? 0 : hosts, 1.0), obs_opt(opt, o.leafspine ? 0 : hosts, 1.0);
  for (LinkId l = 0; l < ned.link_count(); ++l) grad.add_link(ned.capacity(l));
  if (!ls_ned.ok() || !ls_opt.ok() || !obs_ned.ok() || !obs_opt.ok()) {
    std::fprintf(stderr, "topology does not fit\n");
    return 1;
  }
  const uint32_t links = ned.link_count();

  std::mt19937_64 rng(o.seed);
  std::uniform_real_distribution<double> uni(0.0, 1.0);
  std::uniform_int_distribution<uint32_t> host_pick(0, hosts - 1);
  std::uniform_int_distribution<uint32_t> spine_pick(0, kSpines - 1);
  // 100% load: per-server arrival rate = server capacity / mean flow size.
  const double arrivals_per_s = o.load * kHostBytesPerSecond / cdf.mean() * hosts;
  std::exponential_distribution<double> gap(arrivals_per_s);
  double next_arrival = gap(rng);

  FILE* csv = nullptr;
  if (!o.out.empty()) {
    csv = std::fopen(o.out.c_str(), "w");
    if (!csv) {
      std::fprintf(stderr, "cannot write %s\n", o.out.c_str());
      return 2;
    }
    std::fprintf(csv,
                 "step,flows,opt_throughput,ned_fnorm,ned_unorm,grad_fnorm,grad_unorm,"
                 "ned_fnorm_ratio,ned_unorm_ratio,grad_fnorm_ratio,grad_unorm_ratio,"
                 "opt_iterations\n");
  }

  std::vector<Flowlet> flowlets;
  std::vector<FlowId> grad_live;
  Stats nf, nu, gf, gu;
  uint64_t arrived = 0, finished = 0, refused = 0, unconverged = 0, checks = 0;
  double flows_sum = 0;
  int64_t opt_iter_sum = 0;
  const double bytes_per_unit_step = kHostBytesPerSecond * kStepSeconds;

  for (uint64_t step = 0; step < o.steps; ++step) {
    const double t_end = double(step + 1) * kStepSeconds;
    while (next_arrival < t_end) {
      next_arrival += gap(rng);
      const uint32_t src = host_pick(rng);
      uint32_t dst = host_pick(rng);
      while (dst == src) dst = host_pick(rng);
      const uint32_t spine = spine_pick(rng);
      const FlowPath p = o.leafspine ? ls_ned.path(src, dst, spine) : obs_ned.path(src, dst);
      Flowlet fl{};
      fl.ned = ned.add_flow(1.0, p.view());
      if (fl.ned == kInvalidFlow) {
        ++refused;
        continue;
      }
      fl.opt = opt.add_flow(1.0, p.view());
      fl.grad = fl.ned;  // the gradient table mirrors NED's slot ids
      grad.add_flow(fl.grad, p);
      fl.remaining = std::max(1.0, cdf.sample(uni(rng)));
      flowlets.push_back(fl);
      ++arrived;
    }

    ned.iterate();
    grad_live.clear();
    for (const Flowlet& fl : flowlets) grad_live.push_back(fl.grad);
    grad.iterate(grad_live);

    ned.normalise(NormMode::kUNorm);
    double ned_u = 0;
    for (const Flowlet& fl : flowlets) ned_u += ned.normalised_rate(fl.ned);
    ned.normalise(NormMode::kFNorm);
    double ned_f = 0;
    for (const Flowlet& fl : flowlets) ned_f += ned.normalised_rate(fl.ned);

    if (step >= o.warmup && step % o.every == 0 && !flowlets.empty()) {
      const int its = converge(opt, links, o.tol, 100000);
      if (its < 0) ++unconverged;
      double opt_thr = 0;
      for (const Flowlet& fl : flowlets) opt_thr += opt.rate(fl.opt);
      opt_thr *= 1 - o.threshold;  // the optimum at (1 − t)·c
      const auto [grad_f, grad_u] = grad.normalised_throughput(grad_live);
      const double r[4] = {ned_f / opt_thr, ned_u / opt_thr, grad_f / opt_thr,
                           grad_u / opt_thr};
      nf.add(r[0]);
      nu.add(r[1]);
      gf.add(r[2]);
      gu.add(r[3]);
      ++checks;
      flows_sum += double(flowlets.size());
      opt_iter_sum += its < 0 ? 0 : its;
      if (csv) {
        std::fprintf(csv, "%llu,%zu,%.9g,%.9g,%.9g,%.9g,%.9g,%.9g,%.9g,%.9g,%.9g,%d\n",
                     (unsigned long long)step, flowlets.size(), opt_thr, ned_f, ned_u, grad_f,
                     grad_u, r[0], r[1], r[2], r[3], its);
      }
    }

    // Progress at NED's F-NORM rates; finished flowlets leave.
    for (size_t i = 0; i < flowlets.size();) {
      Flowlet& fl = flowlets[i];
      fl.remaining -= ned.normalised_rate(fl.ned) * bytes_per_unit_step;
      if (fl.remaining <= 0) {
        ned.remove_flow(fl.ned);
        opt.remove_flow(fl.opt);
        grad.remove_flow(fl.grad);
        fl = flowlets.back();
        flowlets.pop_back();
        ++finished;
      } else {
        ++i;
      }
    }
  }
  if (csv) std::fclose(csv);

  std::printf("flowtune-optimality: %s, %u spines x %u racks x %u servers, load %.2f, %s\n",
              o.leafspine ? "full-path (leaf-spine, random spine per flowlet)"
                          : "one big switch",
              kSpines, kRacks, kHostsPerRack, o.load, o.cdf.c_str());
  std::printf("steps %llu (%.0f ms), warmup %llu, every %llu, seed %llu, gamma %.2f, "
              "grad step %.3g, threshold %.3g\n",
              (unsigned long long)o.steps, double(o.steps) * kStepSeconds * 1e3,
              (unsigned long long)o.warmup, (unsigned long long)o.every,
              (unsigned long long)o.seed, o.gamma, o.grad_step, o.threshold);
  std::printf("flowlets arrived %llu, finished %llu, refused %llu; checks %llu, mean flows "
              "%.1f, mean optimum iterations %.1f, unconverged %llu\n",
              (unsigned long long)arrived, (unsigned long long)finished,
              (unsigned long long)refused, (unsigned long long)checks,
              checks ? flows_sum / double(checks) : 0,
              checks ? double(opt_iter_sum) / double(checks) : 0,
              (unsigned long long)unconverged);
  std::printf("%-16s %8s %8s %8s %8s %8s %8s\n", "throughput/opt", "mean", "min", "p1", "p10",
              "p50", ">opt");
  const std::pair<const char*, Stats*> rows[] = {
      {"NED F-NORM", &nf}, {"NED U-NORM", &nu}, {"Gradient F-NORM", &gf}, {"Gradient U-NORM", &gu}};
  for (const auto& [name, s] : rows) {
    const double mean = s->mean(), above = s->above_one();
    const double mn = s->pct(0), p1 = s->pct(1), p10 = s->pct(10), p50 = s->pct(50);
    std::printf("%-16s %8.4f %8.4f %8.4f %8.4f %8.4f %7.1f%%\n", name, mean, mn, p1, p10, p50,
                100 * above);
  }
  return checks > 0 && unconverged == 0 ? 0 : 1;
}
