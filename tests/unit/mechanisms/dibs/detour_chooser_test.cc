// DIBS's detour port choice: uniform among the switch-facing ports that
// admit the packet (random), or the least queued of them with ties broken
// at random (load_aware); never the original egress, never a host port.
#include "lib/mechanisms/dibs/detour_chooser.h"

#include <gtest/gtest.h>

#include <map>
#include <vector>

namespace sluice {
namespace {

DetourCandidate up(uint16_t port, bool admits = true, uint64_t queued = 0) {
  return DetourCandidate{port, PortRole::kSwitch, admits, queued};
}
DetourCandidate host(uint16_t port, bool admits = true, uint64_t queued = 0) {
  return DetourCandidate{port, PortRole::kHost, admits, queued};
}

std::map<uint16_t, int> draws(DetourChooser& c, const std::vector<DetourCandidate>& cands,
                              uint16_t egress, int n) {
  std::map<uint16_t, int> seen;
  for (int i = 0; i < n; ++i) ++seen[c.choose(cands.data(), uint32_t(cands.size()), egress)];
  return seen;
}

// Pearson's statistic of observed counts against equal expectations.
double chi_square(const std::map<uint16_t, int>& seen, const std::vector<uint16_t>& ports, int n) {
  const double expected = double(n) / double(ports.size());
  double x2 = 0;
  for (uint16_t p : ports) {
    const auto it = seen.find(p);
    const double o = it == seen.end() ? 0 : it->second;
    x2 += (o - expected) * (o - expected) / expected;
  }
  return x2;
}

// Five eligible ports among an egress, a host port and a full uplink: each
// of the five about a fifth of the time, nothing else ever. With 4 degrees
// of freedom, chi-square above 18.47 has probability 0.001 for a fair
// draw; the seed is fixed, so the test is deterministic.
TEST(DibsChooser, RandomIsUniformAmongTheAdmittingSwitchPorts) {
  DetourChooser c(DibsPolicy::kRandom, 42);
  const std::vector<DetourCandidate> cands = {host(0), up(1), up(2), up(3, false),
                                              up(4),   up(5), up(6), up(7)};
  const uint16_t egress = 7;
  const int n = 100'000;
  const auto seen = draws(c, cands, egress, n);
  const std::vector<uint16_t> eligible = {1, 2, 4, 5, 6};
  EXPECT_EQ(seen.size(), eligible.size());
  for (uint16_t p : eligible) EXPECT_GT(seen.count(p), 0u) << p;
  EXPECT_LT(chi_square(seen, eligible, n), 18.47);
}

// Uniform whatever the position in the list and however many there are:
// the reservoir keeps the k-th eligible with probability 1/k.
TEST(DibsChooser, RandomIsUniformForEveryCount) {
  // 99.9% points of chi-square for 1..7 degrees of freedom.
  const double bound[] = {10.83, 13.82, 16.27, 18.47, 20.52, 22.46, 24.32};
  for (uint16_t k = 2; k <= 8; ++k) {
    DetourChooser c(DibsPolicy::kRandom, 1000 + k);
    std::vector<DetourCandidate> cands;
    std::vector<uint16_t> ports;
    for (uint16_t p = 0; p < k; ++p) {
      cands.push_back(up(p));
      ports.push_back(p);
    }
    const int n = 20'000 * k;
    const auto seen = draws(c, cands, kNoDetour - 1, n);
    EXPECT_LT(chi_square(seen, ports, n), bound[k - 2]) << k << " candidates";
  }
}

TEST(DibsChooser, NeverTheOriginalEgress) {
  for (DibsPolicy policy : {DibsPolicy::kRandom, DibsPolicy::kLoadAware}) {
    DetourChooser c(policy, 7);
    // The egress admits (as far as the caller knows) and is the least queued.
    const std::vector<DetourCandidate> cands = {up(1, true, 0), up(2, true, 100), up(3, true, 100)};
    const auto seen = draws(c, cands, 1, 10'000);
    EXPECT_EQ(seen.count(1), 0u);
    // The egress alone: nowhere to go.
    const DetourCandidate only = up(1);
    EXPECT_EQ(c.choose(&only, 1, 1), kNoDetour);
  }
}

// The chooser does not know which port the packet came in on: the ingress
// is a candidate like any other (the paper bounces packets back).
TEST(DibsChooser, TheIngressIsEligible) {
  for (DibsPolicy policy : {DibsPolicy::kRandom, DibsPolicy::kLoadAware}) {
    DetourChooser c(policy, 3);
    const uint16_t ingress = 2, egress = 0;
    const std::vector<DetourCandidate> cands = {host(egress, false), up(ingress)};
    EXPECT_EQ(c.choose(cands.data(), 2, egress), ingress);
  }
}

TEST(DibsChooser, NeverAHostFacingPort) {
  for (DibsPolicy policy : {DibsPolicy::kRandom, DibsPolicy::kLoadAware}) {
    DetourChooser c(policy, 11);
    // Host ports admit and are the least queued; still never chosen.
    const std::vector<DetourCandidate> cands = {host(0, true, 0), up(1, true, 500),
                                                host(2, true, 0), up(3, true, 500)};
    const auto seen = draws(c, cands, 9, 10'000);
    EXPECT_EQ(seen.count(0) + seen.count(2), 0u);
    EXPECT_GT(seen.at(1), 0);
    EXPECT_GT(seen.at(3), 0);
    const std::vector<DetourCandidate> hosts_only = {host(0), host(1)};
    EXPECT_EQ(c.choose(hosts_only.data(), 2, 9), kNoDetour);
  }
}

TEST(DibsChooser, NoneWhenNothingAdmits) {
  for (DibsPolicy policy : {DibsPolicy::kRandom, DibsPolicy::kLoadAware}) {
    DetourChooser c(policy, 5);
    const std::vector<DetourCandidate> cands = {up(1, false), up(2, false), up(3, false)};
    EXPECT_EQ(c.choose(cands.data(), 3, 0), kNoDetour);
    EXPECT_EQ(c.choose(nullptr, 0, 0), kNoDetour);
  }
}

TEST(DibsChooser, LoadAwarePicksTheLeastQueuedAdmittingPort) {
  DetourChooser c(DibsPolicy::kLoadAware, 9);
  // Port 1 is emptier but refuses; port 4 is the least queued that admits.
  const std::vector<DetourCandidate> cands = {up(1, false, 0), up(2, true, 9000), up(3, true, 3000),
                                              up(4, true, 1500), up(5, true, UINT64_MAX)};
  for (int i = 0; i < 100; ++i) EXPECT_EQ(c.choose(cands.data(), 5, 0), 4);
  // Even when the least queued is the last, or the only, candidate.
  const std::vector<DetourCandidate> last = {up(2, true, 10), up(3, true, 9)};
  EXPECT_EQ(c.choose(last.data(), 2, 0), 3);
  const DetourCandidate full = up(6, true, UINT64_MAX);
  EXPECT_EQ(c.choose(&full, 1, 0), 6);
}

TEST(DibsChooser, LoadAwareBreaksTiesUniformly) {
  DetourChooser c(DibsPolicy::kLoadAware, 21);
  const std::vector<DetourCandidate> cands = {up(1, true, 3000), up(2, true, 1500),
                                              up(3, true, 1500), up(4, true, 4000),
                                              up(5, true, 1500)};
  const int n = 60'000;
  const auto seen = draws(c, cands, 0, n);
  EXPECT_EQ(seen.size(), 3u);                        // 2, 3 and 5 only
  EXPECT_LT(chi_square(seen, {2, 3, 5}, n), 13.82);  // 2 degrees of freedom, p = 0.001
}

// A fresh tie after a lower value restarts the count: the earlier, higher
// candidates do not dilute the ties that follow.
TEST(DibsChooser, LoadAwareTiesRestartAtANewLeast) {
  DetourChooser c(DibsPolicy::kLoadAware, 8);
  const std::vector<DetourCandidate> cands = {up(1, true, 500), up(2, true, 500), up(3, true, 100),
                                              up(4, true, 100)};
  const int n = 20'000;
  const auto seen = draws(c, cands, 0, n);
  EXPECT_EQ(seen.size(), 2u);
  EXPECT_LT(chi_square(seen, {3, 4}, n), 10.83);
}

TEST(DibsChooser, OneSeedOneSequence) {
  const std::vector<DetourCandidate> cands = {up(1), up(2), up(3), up(4)};
  DetourChooser a(DibsPolicy::kRandom, 77), b(DibsPolicy::kRandom, 77);
  DetourChooser other(DibsPolicy::kRandom, 78);
  int differ = 0;
  for (int i = 0; i < 1000; ++i) {
    const uint16_t x = a.choose(cands.data(), 4, 0);
    EXPECT_EQ(x, b.choose(cands.data(), 4, 0));
    differ += x != other.choose(cands.data(), 4, 0);
  }
  EXPECT_GT(differ, 0);
}

}  // namespace
}  // namespace sluice
