#include "switch/mechanisms/flowtune/flowtune_control.h"

#include <poll.h>
#include <sys/prctl.h>

#include <ctime>

namespace sluice {

void FlowtuneControl::start(const std::vector<FlowtuneEdge*>& edges) {
  for (FlowtuneEdge* e : edges) {
    if (e->udp() != nullptr) edges_.push_back(e->udp());
  }
  if (edges_.empty()) return;
  thread_ = std::thread([this] { run(); });
}

void FlowtuneControl::stop() {
  if (!thread_.joinable()) return;
  stop_.store(true);
  thread_.join();
}

void FlowtuneControl::run() {
  // Short waits, honoured to the microsecond rather than the default 50 µs.
  prctl(PR_SET_TIMERSLACK, 1000UL, 0, 0, 0);
  std::vector<pollfd> fds;
  for (FlowtuneUdpPath* e : edges_) fds.push_back({e->fd(), POLLIN, 0});
  const timespec wait{0, kWaitUs * 1000L};
  while (!stop_.load(std::memory_order_relaxed)) {
    bool moved = false;
    for (FlowtuneUdpPath* e : edges_) moved |= e->serve();
    if (!moved) ppoll(fds.data(), fds.size(), &wait, nullptr);
  }
  for (FlowtuneUdpPath* e : edges_) e->serve();  // what the workers reported last
}

}  // namespace sluice
