#include "switch/flowtune_edge.h"

#include <arpa/inet.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

namespace sluice {

FlowtuneEdge::FlowtuneEdge(const FlowtuneConfig& c)
    : cfg(c),
      flowlets(c.flows, c.idle_gap_ns),
      pacer(c.flows, {c.max_held_packets, c.ecn_threshold_bytes}),
      held(c.flows, c.max_held_packets) {}

FlowtuneEdge::~FlowtuneEdge() {
  if (fd_ >= 0) close(fd_);
}

bool FlowtuneEdge::open(std::string* error) {
  fd_ = socket(AF_INET, SOCK_DGRAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
  if (fd_ < 0) {
    *error = std::string("flowtune: cannot create a UDP socket: ") + std::strerror(errno);
    return false;
  }
  sockaddr_in to{};
  to.sin_family = AF_INET;
  to.sin_addr.s_addr = htonl(cfg.allocator_ip);
  to.sin_port = htons(cfg.allocator_port);
  if (connect(fd_, reinterpret_cast<const sockaddr*>(&to), sizeof to) != 0) {
    char ip[INET_ADDRSTRLEN] = {};
    inet_ntop(AF_INET, &to.sin_addr, ip, sizeof ip);
    *error = "flowtune: cannot use allocator address " + std::string(ip) + ":" +
             std::to_string(cfg.allocator_port) + ": " + std::strerror(errno);
    return false;
  }
  return true;
}

void FlowtuneEdge::report_start(uint32_t flow_id, uint32_t src_ip, uint32_t dst_ip) {
  outbox_.start({flow_id, src_ip, dst_ip, static_cast<uint16_t>(cfg.weight)},
                [this](const uint8_t* p, uint32_t len) { send(p, len); });
  starts_sent.add();
}

void FlowtuneEdge::report_end(uint32_t flow_id) {
  outbox_.end(flow_id, [this](const uint8_t* p, uint32_t len) { send(p, len); });
  ends_sent.add();
}

void FlowtuneEdge::poll(uint64_t now_ns) {
  if (!outbox_.empty()) outbox_.flush([this](const uint8_t* p, uint32_t len) { send(p, len); });
  receive(now_ns);
}

// A datagram the kernel will not take (no allocator listening yet gives
// ECONNREFUSED on a connected socket; a full buffer EAGAIN) is lost news:
// the flows it named stay unpaced, which is the safe side.
void FlowtuneEdge::send(const uint8_t* p, uint32_t len) {
  if (::send(fd_, p, len, MSG_DONTWAIT) == static_cast<ssize_t>(len)) {
    datagrams_sent.add();
  } else {
    send_errors.add();
  }
}

void FlowtuneEdge::receive(uint64_t now_ns) {
  for (unsigned i = 0; i < kMaxDatagramsPerPoll; ++i) {
    const ssize_t n = recv(fd_, rx_, sizeof rx_, MSG_DONTWAIT | MSG_TRUNC);
    if (n < 0) {
      if (errno == EAGAIN || errno == EWOULDBLOCK) return;
      continue;  // ECONNREFUSED from an earlier send: nothing to read
    }
    datagrams_received.add();
    // MSG_TRUNC gives the datagram's real length: one longer than the
    // buffer cannot be a RATE_UPDATE we sent for (the allocator keeps to
    // one MTU), so it counts as a length mismatch unread.
    FlowtuneMessage m;
    const FlowtuneParseResult r = size_t(n) > sizeof rx_
                                      ? FlowtuneParseResult::kCountMismatch
                                      : parse_flowtune(rx_, static_cast<uint32_t>(n), &m);
    if (r != FlowtuneParseResult::kOk) {
      malformed[static_cast<unsigned>(r)].add();
      continue;
    }
    if (m.type != FlowtuneType::kRateUpdate) {
      unexpected_messages.add();
      continue;
    }
    for (uint32_t e = 0; e < m.count; ++e) {
      const RateUpdate u = m.rate_update(e);
      if (pacer.set_rate(u.flow_id, u.rate_kbps, now_ns, cfg.lease_ns)) rate_updates.add();
    }
  }
}

}  // namespace sluice
