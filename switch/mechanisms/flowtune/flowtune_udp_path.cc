#include "switch/mechanisms/flowtune/flowtune_udp_path.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <rte_errno.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

namespace sluice {

FlowtuneUdpPath::~FlowtuneUdpPath() {
  if (fd_ >= 0) close(fd_);
}

void FlowtuneUdpPath::release_rings() {
  rte_ring_free(to_control_);
  rte_ring_free(to_worker_);
  to_control_ = to_worker_ = nullptr;
}

bool FlowtuneUdpPath::open(const std::string& name, std::string* error) {
  const unsigned flags = RING_F_SP_ENQ | RING_F_SC_DEQ;
  to_control_ =
      rte_ring_create_elem(("ftc_" + name).c_str(), sizeof(Event), kRingSize, SOCKET_ID_ANY, flags);
  to_worker_ =
      rte_ring_create_elem(("ftw_" + name).c_str(), sizeof(Event), kRingSize, SOCKET_ID_ANY, flags);
  if (to_control_ == nullptr || to_worker_ == nullptr) {
    *error = std::string("flowtune: cannot create rings: ") + rte_strerror(rte_errno);
    return false;
  }
  fd_ = socket(AF_INET, SOCK_DGRAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
  if (fd_ < 0) {
    *error = std::string("flowtune: cannot create a UDP socket: ") + std::strerror(errno);
    return false;
  }
  sockaddr_in to{};
  to.sin_family = AF_INET;
  to.sin_addr.s_addr = htonl(cfg_.allocator_ip);
  to.sin_port = htons(cfg_.allocator_port);
  if (connect(fd_, reinterpret_cast<const sockaddr*>(&to), sizeof to) != 0) {
    char ip[INET_ADDRSTRLEN] = {};
    inet_ntop(AF_INET, &to.sin_addr, ip, sizeof ip);
    *error = "flowtune: cannot use allocator address " + std::string(ip) + ":" +
             std::to_string(cfg_.allocator_port) + ": " + std::strerror(errno);
    return false;
  }
  return true;
}

bool FlowtuneUdpPath::post_start(uint32_t flow_id, uint32_t src_ip, uint32_t dst_ip) {
  Event e{flow_id, src_ip, dst_ip, kStart};
  return rte_ring_sp_enqueue_elem(to_control_, &e, sizeof(Event)) == 0;
}

bool FlowtuneUdpPath::post_end(uint32_t flow_id) {
  Event e{flow_id, 0, 0, kEnd};
  return rte_ring_sp_enqueue_elem(to_control_, &e, sizeof(Event)) == 0;
}

bool FlowtuneUdpPath::serve() {
  Event batch[64];
  const unsigned n = rte_ring_sc_dequeue_burst_elem(to_control_, batch, sizeof(Event), 64, nullptr);
  auto out = [this](const uint8_t* p, uint32_t len) { send(p, len); };
  for (unsigned i = 0; i < n; ++i) {
    if (batch[i].kind == kStart) {
      outbox_.start({batch[i].flow_id, batch[i].a, batch[i].b, static_cast<uint16_t>(cfg_.weight)},
                    out);
    } else {
      outbox_.end(batch[i].flow_id, out);
    }
  }
  // A whole burst may be followed by more: send when the ring ran dry.
  if (n < 64 && !outbox_.empty()) outbox_.flush(out);
  return receive() || n != 0;
}

// A datagram the kernel will not take (no allocator listening yet gives
// ECONNREFUSED on a connected socket; a full buffer EAGAIN) is lost news:
// the flows it named stay unpaced, which is the safe side.
void FlowtuneUdpPath::send(const uint8_t* p, uint32_t len) {
  if (::send(fd_, p, len, MSG_DONTWAIT) == static_cast<ssize_t>(len)) {
    datagrams_sent.add();
  } else {
    send_errors.add();
  }
}

bool FlowtuneUdpPath::receive() {
  bool any = false;
  for (unsigned i = 0; i < 64; ++i) {
    const ssize_t n = recv(fd_, rx_, sizeof rx_, MSG_DONTWAIT | MSG_TRUNC);
    if (n < 0) {
      if (errno == EAGAIN || errno == EWOULDBLOCK) return any;
      continue;  // ECONNREFUSED from an earlier send: nothing to read
    }
    any = true;
    datagrams_received.add();
    // MSG_TRUNC gives the datagram's real length: one longer than the
    // buffer cannot be a RATE_UPDATE (the allocator keeps to one MTU), so
    // it counts as a length mismatch unread.
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
      Event ev{u.flow_id, u.rate_kbps, 0, 0};
      if (rte_ring_sp_enqueue_elem(to_worker_, &ev, sizeof(Event)) != 0) rates_lost.add();
    }
  }
  return any;
}

}  // namespace sluice
