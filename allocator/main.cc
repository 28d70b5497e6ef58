// sluice-allocator: the Flowtune rate allocator as its own program (SPEC
// §4.5, §5). Edge switches send FLOWLET_START / FLOWLET_END to it over UDP
// (port 9750); it runs NED over the one-big-switch model and answers each
// flow's rate with RATE_UPDATE to the address the FLOWLET_START came from.
// docs/mechanisms/flowtune.md ("The allocator program").

#include <arpa/inet.h>
#include <signal.h>

#include <atomic>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <optional>
#include <string>
#include <string_view>

#include "allocator/allocator_metrics.h"
#include "allocator/allocator_server.h"
#include "lib/config/units.h"

namespace {

std::atomic<bool> g_stop{false};

void on_signal(int) { g_stop.store(true, std::memory_order_relaxed); }

constexpr const char* kUsage =
    "usage: sluice-allocator [options]\n"
    "  --address IP:PORT        UDP address for FLOWLET_START/END (default 127.0.0.1:9750)\n"
    "  --hosts N                most distinct host addresses (default 1024; 2 links each)\n"
    "  --host-rate RATE         capacity of every host up and down link (default 10Gbps)\n"
    "  --iteration DURATION     time between NED iterations, 0 = back to back (default 10us)\n"
    "  --threshold X            headroom and notification threshold (default 0.01)\n"
    "  --lease DURATION         rate lease; a rate unsent for lease/2 is re-sent (default 10ms)\n"
    "  --max-flows N            flow table size (default 65536)\n"
    "  --metrics-address H:P    Prometheus /metrics (default 127.0.0.1:9751; '' = off)\n"
    "  --duration DURATION      stop after this long (default: until SIGTERM/SIGINT)\n";

bool parse_ipv4_port(const std::string& s, sockaddr_in* out) {
  const auto colon = s.rfind(':');
  if (colon == std::string::npos) return false;
  const std::string ip = s.substr(0, colon);
  char* end = nullptr;
  const std::string port = s.substr(colon + 1);
  const unsigned long p = std::strtoul(port.c_str(), &end, 10);
  if (port.empty() || *end != '\0' || p > 65535) return false;
  *out = sockaddr_in{};
  out->sin_family = AF_INET;
  out->sin_port = htons(uint16_t(p));
  return inet_pton(AF_INET, ip.c_str(), &out->sin_addr) == 1;
}

std::optional<uint64_t> parse_uint(const std::string& s, uint64_t min, uint64_t max) {
  char* end = nullptr;
  errno = 0;
  const unsigned long long v = std::strtoull(s.c_str(), &end, 10);
  if (s.empty() || *end != '\0' || errno != 0 || s[0] == '-' || v < min || v > max)
    return std::nullopt;
  return v;
}

}  // namespace

int main(int argc, char** argv) {
  using namespace sluice;
  allocator::ServerConfig cfg;
  parse_ipv4_port("127.0.0.1:9750", &cfg.bind);
  std::string metrics_address = "127.0.0.1:9751";
  auto fail = [](const std::string& msg) {
    std::fprintf(stderr, "sluice-allocator: %s\n%s", msg.c_str(), kUsage);
    return 2;
  };
  for (int i = 1; i < argc; ++i) {
    const std::string opt = argv[i];
    if (opt == "--help" || opt == "-h") {
      std::fputs(kUsage, stdout);
      return 0;
    }
    if (i + 1 >= argc) return fail("missing value for " + opt);
    const std::string val = argv[++i];
    auto bad = [&] { return fail("bad value for " + opt + ": '" + val + "'"); };
    if (opt == "--address") {
      if (!parse_ipv4_port(val, &cfg.bind)) return bad();
    } else if (opt == "--hosts") {
      auto v = parse_uint(val, 1, 1u << 24);
      if (!v) return bad();
      cfg.max_hosts = uint32_t(*v);
    } else if (opt == "--host-rate") {
      auto v = parse_rate_bps(val);
      if (!v || *v < 1000) return bad();
      cfg.host_rate_bps = *v;
    } else if (opt == "--iteration") {
      auto v = parse_duration_ns(val);
      if (!v) return bad();
      cfg.iteration_ns = *v;
    } else if (opt == "--threshold") {
      char* end = nullptr;
      const double t = std::strtod(val.c_str(), &end);
      if (val.empty() || *end != '\0' || !(t >= 0 && t < 1)) return bad();
      cfg.threshold = t;
    } else if (opt == "--lease") {
      auto v = parse_duration_ns(val);
      if (!v || *v == 0) return bad();
      cfg.lease_ns = *v;
    } else if (opt == "--max-flows") {
      auto v = parse_uint(val, 1, 1u << 26);
      if (!v) return bad();
      cfg.max_flows = uint32_t(*v);
    } else if (opt == "--metrics-address") {
      metrics_address = val;
    } else if (opt == "--duration") {
      auto v = parse_duration_ns(val);
      if (!v) return bad();
      cfg.duration_ns = *v;
    } else {
      return fail("unknown option " + opt);
    }
  }

  struct sigaction sa {};
  sa.sa_handler = on_signal;
  sigemptyset(&sa.sa_mask);
  sigaction(SIGTERM, &sa, nullptr);
  sigaction(SIGINT, &sa, nullptr);

  allocator::Stats stats;
  allocator::Server server(cfg, stats);
  std::string error;
  if (!server.open(&error)) {
    std::fprintf(stderr, "sluice-allocator: %s\n", error.c_str());
    return 1;
  }
  allocator::AllocatorMetrics metrics(stats);
  if (!metrics_address.empty() && !metrics.start(metrics_address, &error)) {
    std::fprintf(stderr, "sluice-allocator: metrics on %s: %s\n", metrics_address.c_str(),
                 error.c_str());
    return 1;
  }
  char ip[INET_ADDRSTRLEN];
  inet_ntop(AF_INET, &cfg.bind.sin_addr, ip, sizeof ip);
  std::printf(
      "sluice-allocator listening on %s:%u (host rate %.6g Gbit/s, iteration %llu ns,"
      " lease %llu ns, metrics %s)\n",
      ip, server.port(), double(cfg.host_rate_bps) * 1e-9, (unsigned long long)cfg.iteration_ns,
      (unsigned long long)cfg.lease_ns, metrics_address.empty() ? "off" : metrics_address.c_str());
  std::fflush(stdout);

  server.run(g_stop);

  auto get = [](const std::atomic<uint64_t>& c) {
    return (unsigned long long)c.load(std::memory_order_relaxed);
  };
  unsigned long long malformed = 0;
  for (const auto& c : stats.malformed) malformed += get(c);
  std::printf(
      "sluice-allocator summary: %.3f s, flows %u, hosts %u, iterations %llu,"
      " updates sent %llu (%llu lease re-sends, %llu bytes in %llu datagrams), datagrams %llu,"
      " malformed %llu, iteration late p99 %llu ns max %llu ns\n",
      server.elapsed_seconds(), unsigned(stats.core.flows.get()), unsigned(stats.core.hosts.get()),
      (unsigned long long)stats.core.iterations.get(), get(stats.updates_sent),
      (unsigned long long)stats.core.lease_resends.get(), get(stats.update_bytes),
      get(stats.update_messages), get(stats.datagrams), malformed,
      (unsigned long long)stats.late_p99_ns(), get(stats.iter_late_max_ns));
  std::fflush(stdout);
  return 0;
}
