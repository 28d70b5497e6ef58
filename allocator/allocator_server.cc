#include "allocator/allocator_server.h"

#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include <algorithm>
#include <cstring>

namespace sluice::allocator {
namespace {

uint64_t now_ns() {
  timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return uint64_t(ts.tv_sec) * 1'000'000'000ULL + uint64_t(ts.tv_nsec);
}

// A sender's name for the core: its IPv4 address and UDP port.
uint64_t addr_key(const sockaddr_in& a) {
  return (uint64_t(ntohl(a.sin_addr.s_addr)) << 16) | ntohs(a.sin_port);
}

// Datagrams read per pass before the allocator iterates again.
constexpr unsigned kRecvBurst = 256;
// A wait shorter than this is spun rather than slept (the kernel's timer
// slack alone is ~50 us).
constexpr uint64_t kSpinBelowNs = 100'000;

flowtune::AllocatorConfig core_config(const ServerConfig& cfg) {
  flowtune::AllocatorConfig c;
  c.max_hosts = cfg.max_hosts;
  c.max_flows = cfg.max_flows;
  c.max_senders = cfg.max_flows;
  c.host_rate_bps = cfg.host_rate_bps;
  c.iteration_ns = cfg.iteration_ns;
  c.threshold = cfg.threshold;
  c.lease_ns = cfg.lease_ns;
  return c;
}

}  // namespace

Server::Server(const ServerConfig& cfg, Stats& stats)
    : cfg_(cfg),
      stats_(stats),
      core_(core_config(cfg), stats.core),
      per_msg_(flowtune_entries_per_payload(FlowtuneType::kRateUpdate, kFlowtuneMtuPayload)) {
  rx_buf_.resize(65536);
  tx_buf_.resize(kFlowtuneMtuPayload);
}

Server::~Server() {
  if (fd_ >= 0) close(fd_);
}

bool Server::open(std::string* error) {
  fd_ = socket(AF_INET, SOCK_DGRAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
  if (fd_ < 0) {
    *error = std::string("socket: ") + strerror(errno);
    return false;
  }
  int buf = 4 << 20;
  setsockopt(fd_, SOL_SOCKET, SO_RCVBUF, &buf, sizeof buf);
  setsockopt(fd_, SOL_SOCKET, SO_SNDBUF, &buf, sizeof buf);
  if (bind(fd_, reinterpret_cast<const sockaddr*>(&cfg_.bind), sizeof cfg_.bind) != 0) {
    char a[INET_ADDRSTRLEN];
    inet_ntop(AF_INET, &cfg_.bind.sin_addr, a, sizeof a);
    *error = std::string("bind ") + a + ":" + std::to_string(ntohs(cfg_.bind.sin_port)) + ": " +
             strerror(errno);
    return false;
  }
  sockaddr_in got{};
  socklen_t len = sizeof got;
  getsockname(fd_, reinterpret_cast<sockaddr*>(&got), &len);
  port_ = ntohs(got.sin_port);
  return true;
}

// A new sender's address is kept for its RATE_UPDATEs; the core numbers
// senders as they first appear.
void Server::flowlet_start(const FlowletStart& st, const sockaddr_in& from, uint64_t key_addr) {
  uint32_t sender;
  core_.flowlet_start(key_addr, st, &sender);
  if (sender != flowtune::AllocatorCore::kNoSender && sender >= dests_.size()) {
    dests_.push_back(Dest{from, {}});
    dests_.back().pending.reserve(per_msg_);
  }
}

void Server::handle(const uint8_t* p, uint32_t len, const sockaddr_in& from) {
  FlowtuneMessage m;
  const FlowtuneParseResult r = parse_flowtune(p, len, &m);
  if (r != FlowtuneParseResult::kOk) {
    stats_.add(stats_.malformed[static_cast<unsigned>(r)]);
    return;
  }
  stats_.add(stats_.messages[static_cast<unsigned>(m.type) - 1]);
  const uint64_t key_addr = addr_key(from);
  switch (m.type) {
    case FlowtuneType::kFlowletStart:
      for (uint32_t i = 0; i < m.count; ++i) flowlet_start(m.flowlet_start(i), from, key_addr);
      break;
    case FlowtuneType::kFlowletEnd:
      for (uint32_t i = 0; i < m.count; ++i) core_.flowlet_end(key_addr, m.flowlet_end(i).flow_id);
      break;
    case FlowtuneType::kRateUpdate:  // the allocator's own message: ignored
      break;
  }
}

void Server::receive() {
  for (unsigned i = 0; i < kRecvBurst; ++i) {
    sockaddr_in from{};
    socklen_t flen = sizeof from;
    const ssize_t n =
        recvfrom(fd_, rx_buf_.data(), rx_buf_.size(), 0, reinterpret_cast<sockaddr*>(&from), &flen);
    if (n < 0) return;  // EAGAIN, or an error the next pass retries
    stats_.add(stats_.datagrams);
    handle(rx_buf_.data(), uint32_t(n), from);
  }
}

void Server::flush(uint32_t d) {
  Dest& dest = dests_[d];
  if (dest.pending.empty()) return;
  const uint32_t len = build_rate_update(tx_buf_.data(), uint32_t(tx_buf_.size()), dest.pending);
  const ssize_t n = sendto(fd_, tx_buf_.data(), len, 0,
                           reinterpret_cast<const sockaddr*>(&dest.addr), sizeof dest.addr);
  if (n == ssize_t(len)) {
    stats_.add(stats_.update_messages);
    stats_.add(stats_.update_bytes, len + kFlowtuneIpUdpHeaderLen);
    stats_.add(stats_.updates_sent, dest.pending.size());
  } else {
    stats_.add(stats_.send_errors);
  }
  dest.pending.clear();
}

void Server::flush_all() {
  for (uint32_t d : dirty_) flush(d);
  dirty_.clear();
}

void Server::queue_updates(std::span<const flowtune::AllocatorUpdate> updates) {
  for (const flowtune::AllocatorUpdate& u : updates) {
    Dest& dest = dests_[u.sender];
    if (dest.pending.empty()) dirty_.push_back(u.sender);
    dest.pending.push_back(RateUpdate{u.flow_id, u.rate_kbps});
    if (dest.pending.size() >= per_msg_) flush(u.sender);  // stays in dirty_, flushed empty
  }
}

void Server::run(const std::atomic<bool>& stop) {
  const uint64_t start = now_ns();
  const uint64_t end = cfg_.duration_ns ? start + cfg_.duration_ns : UINT64_MAX;
  uint64_t next_tick = start + 1'000'000'000ULL;
  uint64_t tick_start = start, tick_iters = 0, tick_bytes = 0;
  for (;;) {
    uint64_t now = now_ns();
    if (stop.load(std::memory_order_relaxed) || now >= end) break;
    receive();
    now = now_ns();
    if (core_.iteration_due(now)) {
      const uint64_t t0 = now_ns();
      const flowtune::AllocatorCore::Iteration it = core_.iterate(now);
      stats_.record_iteration(now_ns() - t0);
      // The first iteration after an idle spell is not late.
      if (it.judged) stats_.record_lateness(it.late_ns);
      queue_updates(it.updates);
    }
    if (core_.lease_due(now)) queue_updates(core_.lease_pass(now));
    flush_all();
    if (now >= next_tick) {
      const double dt = double(now - tick_start) * 1e-9;
      const uint64_t iters = stats_.core.iterations.get();
      const uint64_t bytes = stats_.update_bytes.load(std::memory_order_relaxed);
      stats_.iterations_per_second.store(double(iters - tick_iters) / dt,
                                         std::memory_order_relaxed);
      const double capacity_bps = double(core_.host_count()) * double(cfg_.host_rate_bps);
      stats_.update_fraction.store(
          capacity_bps > 0 ? double(bytes - tick_bytes) * 8.0 / dt / capacity_bps : 0.0,
          std::memory_order_relaxed);
      tick_start = now;
      tick_iters = iters;
      tick_bytes = bytes;
      next_tick = now + 1'000'000'000ULL;
    }
    // Wait for a datagram or the next deadline; short waits are spun.
    const uint64_t deadline = std::min({core_.next_due_ns(), next_tick, end});
    now = now_ns();
    if (deadline <= now || deadline - now < kSpinBelowNs) continue;
    const uint64_t wait = std::min<uint64_t>(deadline - now, 100'000'000ULL);  // signals
    timespec ts{time_t(wait / 1'000'000'000ULL), long(wait % 1'000'000'000ULL)};
    pollfd pfd{fd_, POLLIN, 0};
    ppoll(&pfd, 1, &ts, nullptr);
  }
  elapsed_s_ = double(now_ns() - start) * 1e-9;
}

}  // namespace sluice::allocator
