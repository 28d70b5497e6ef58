#include "allocator/allocator_server.h"

#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <cstring>

namespace sluice::allocator {
namespace {

uint64_t now_ns() {
  timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return uint64_t(ts.tv_sec) * 1'000'000'000ULL + uint64_t(ts.tv_nsec);
}

uint64_t addr_key(const sockaddr_in& a) {
  return (uint64_t(ntohl(a.sin_addr.s_addr)) << 16) | ntohs(a.sin_port);
}

// Datagrams read per pass before the allocator iterates again.
constexpr unsigned kRecvBurst = 256;
// A wait shorter than this is spun rather than slept (the kernel's timer
// slack alone is ~50 us).
constexpr uint64_t kSpinBelowNs = 100'000;
constexpr uint32_t kIpUdpHeaderBytes = 28;

}  // namespace

Server::Server(const ServerConfig& cfg, Stats& stats)
    : cfg_(cfg),
      stats_(stats),
      alloc_(flowtune::NedConfig{cfg.max_flows, 2 * cfg.max_hosts, flowtune::kDefaultGamma,
                                 cfg.threshold}),
      per_msg_(flowtune_entries_per_payload(FlowtuneType::kRateUpdate, kFlowtuneMtuPayload)) {
  flows_by_key_.reserve(cfg.max_flows);
  meta_.resize(cfg.max_flows);
  hosts_.reserve(cfg.max_hosts);
  host_links_.reserve(2 * cfg.max_hosts);
  notices_.resize(std::max<uint32_t>(cfg.max_flows, 1));
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

uint32_t Server::to_kbps(double norm) const {
  const double kbps = std::round(norm * double(cfg_.host_rate_bps) / 1000.0);
  if (!(kbps > 0)) return 0;
  return kbps >= double(UINT32_MAX) ? UINT32_MAX : uint32_t(kbps);
}

uint32_t Server::host(uint32_t ip) {
  auto it = hosts_.find(ip);
  if (it != hosts_.end()) return it->second;
  if (hosts_.size() >= cfg_.max_hosts) return UINT32_MAX;
  // Capacities are in units of the host rate: every host link is 1.
  const flowtune::LinkId up = alloc_.add_link(1.0);
  const flowtune::LinkId down = alloc_.add_link(1.0);
  if (up == flowtune::kInvalidLink || down == flowtune::kInvalidLink) return UINT32_MAX;
  const uint32_t h = uint32_t(hosts_.size());
  hosts_.emplace(ip, h);
  host_links_.push_back(up);
  host_links_.push_back(down);
  stats_.hosts.store(uint32_t(hosts_.size()), std::memory_order_relaxed);
  stats_.links.store(alloc_.link_count(), std::memory_order_relaxed);
  return h;
}

void Server::flowlet_start(const FlowletStart& s, const sockaddr_in& from, uint64_t key_addr) {
  const SenderKey key{key_addr, s.flow_id};
  if (flows_by_key_.count(key) != 0) {
    stats_.add(stats_.start_duplicate);
    return;
  }
  const uint32_t hs = host(s.src_ip);
  const uint32_t hd = hs == UINT32_MAX ? UINT32_MAX : host(s.dst_ip);
  if (hd == UINT32_MAX) {
    stats_.add(stats_.start_refused);
    return;
  }
  uint32_t dest;
  auto dit = dest_by_addr_.find(key_addr);
  if (dit != dest_by_addr_.end()) {
    dest = dit->second;
  } else {
    if (dests_.size() >= cfg_.max_flows) {
      stats_.add(stats_.start_refused);
      return;
    }
    dest = uint32_t(dests_.size());
    dests_.push_back(Dest{from, {}});
    dests_.back().pending.reserve(per_msg_);
    dest_by_addr_.emplace(key_addr, dest);
  }
  const flowtune::LinkId path[2] = {host_links_[2 * hs], host_links_[2 * hd + 1]};
  const flowtune::FlowId f = alloc_.add_flow(double(s.weight), path);
  if (f == flowtune::kInvalidFlow) {
    stats_.add(stats_.start_refused);
    return;
  }
  flows_by_key_.emplace(key, f);
  meta_[f] = FlowMeta{key, dest, 0, true};
  stats_.add(stats_.starts);
  stats_.flows.store(alloc_.flow_count(), std::memory_order_relaxed);
}

void Server::flowlet_end(const FlowletEnd& e, uint64_t key_addr) {
  auto it = flows_by_key_.find(SenderKey{key_addr, e.flow_id});
  if (it == flows_by_key_.end()) {
    stats_.add(stats_.end_unknown);
    return;
  }
  alloc_.remove_flow(it->second);
  meta_[it->second].live = false;
  flows_by_key_.erase(it);
  stats_.add(stats_.ends);
  stats_.flows.store(alloc_.flow_count(), std::memory_order_relaxed);
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
      for (uint32_t i = 0; i < m.count; ++i) flowlet_end(m.flowlet_end(i), key_addr);
      break;
    case FlowtuneType::kRateUpdate:  // the allocator's own message: ignored
      break;
  }
}

void Server::receive(uint64_t /*now_ns*/) {
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
    stats_.add(stats_.update_bytes, len + kIpUdpHeaderBytes);
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

void Server::queue_update(flowtune::FlowId f, double norm, uint64_t now) {
  FlowMeta& m = meta_[f];
  Dest& dest = dests_[m.dest];
  if (dest.pending.empty()) dirty_.push_back(m.dest);
  dest.pending.push_back(RateUpdate{m.key.flow_id, to_kbps(norm)});
  m.last_send_ns = now;
  if (dest.pending.size() >= per_msg_) flush(m.dest);  // stays in dirty_, flushed empty
}

void Server::iterate_once() {
  const uint64_t t0 = now_ns();
  alloc_.iterate();
  alloc_.normalise(flowtune::NormMode::kFNorm);
  const uint32_t n = alloc_.collect_notices(notices_);
  const uint64_t t1 = now_ns();
  stats_.record_iteration(t1 - t0);
  for (uint32_t i = 0; i < n; ++i) queue_update(notices_[i].flow, notices_[i].rate, t1);
}

// A rate not sent for lease/2 is sent again (its last sent value). The check
// runs every lease/4, so a re-send leaves at most 3/4 of a lease after the
// previous send: the edge's lease never lapses while the allocator runs.
void Server::lease_pass(uint64_t now) {
  const uint64_t half = cfg_.lease_ns / 2;
  for (flowtune::FlowId f = 0; f < meta_.size(); ++f) {
    const FlowMeta& m = meta_[f];
    if (!m.live || m.last_send_ns == 0 || now - m.last_send_ns < half) continue;
    queue_update(f, alloc_.last_sent(f), now);
    stats_.add(stats_.lease_resends);
  }
}

void Server::run(const std::atomic<bool>& stop) {
  const uint64_t start = now_ns();
  const uint64_t end = cfg_.duration_ns ? start + cfg_.duration_ns : UINT64_MAX;
  const uint64_t lease_step = std::max<uint64_t>(cfg_.lease_ns / 4, 1);
  uint64_t next_iter = start;
  uint64_t next_lease = start + lease_step;
  uint64_t next_tick = start + 1'000'000'000ULL;
  uint64_t tick_start = start, tick_iters = 0, tick_bytes = 0;
  bool was_busy = false;
  for (;;) {
    uint64_t now = now_ns();
    if (stop.load(std::memory_order_relaxed) || now >= end) break;
    receive(now);
    now = now_ns();
    const bool busy = alloc_.flow_count() > 0;
    if (busy && (cfg_.iteration_ns == 0 || now >= next_iter)) {
      // After an idle spell next_iter is stale: the first iteration is not late.
      if (was_busy && cfg_.iteration_ns) stats_.record_lateness(now - next_iter);
      iterate_once();
      next_iter += cfg_.iteration_ns;
      if (next_iter <= now) next_iter = now + cfg_.iteration_ns;  // no catching up
    }
    was_busy = busy;
    if (now >= next_lease) {
      lease_pass(now);
      next_lease = now + lease_step;
    }
    flush_all();
    if (now >= next_tick) {
      const double dt = double(now - tick_start) * 1e-9;
      const uint64_t iters = stats_.iterations.load(std::memory_order_relaxed);
      const uint64_t bytes = stats_.update_bytes.load(std::memory_order_relaxed);
      stats_.iterations_per_second.store(double(iters - tick_iters) / dt,
                                         std::memory_order_relaxed);
      const double capacity_bps = double(hosts_.size()) * double(cfg_.host_rate_bps);
      stats_.update_fraction.store(
          capacity_bps > 0 ? double(bytes - tick_bytes) * 8.0 / dt / capacity_bps : 0.0,
          std::memory_order_relaxed);
      tick_start = now;
      tick_iters = iters;
      tick_bytes = bytes;
      next_tick = now + 1'000'000'000ULL;
    }
    // Wait for a datagram or the next deadline; short waits are spun.
    uint64_t deadline = std::min({next_lease, next_tick, end});
    if (alloc_.flow_count() > 0) deadline = std::min(deadline, cfg_.iteration_ns ? next_iter : now);
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
