#pragma once
// The thread that carries Flowtune's messages between the edges' rings and
// the allocator's socket (switch/mechanisms/flowtune/flowtune_edge.h), so that no worker lcore
// makes a system call for them. Started from the main lcore, it inherits
// the main lcore's CPU, never a worker's. It waits in poll() on the sockets
// for at most kWaitUs between passes, so news from the worker waits at most
// about that long (plus the kernel's timer slack, set to 1 µs here). 50 µs,
// not less: on a small machine the main lcore's cpu is where the kernel's
// other work runs, and a thread waking 100,000 times a second there pushed
// that work onto the workers' cpus (docs/mechanisms/flowtune.md).

#include <atomic>
#include <thread>
#include <vector>

#include "switch/mechanisms/flowtune/flowtune_edge.h"

namespace sluice {

class FlowtuneControl {
 public:
  static constexpr int kWaitUs = 50;
  // Starts the thread if any of the edges talks to sluice-allocator over
  // UDP (in exact time the allocator is in the fabric: no thread).
  void start(const std::vector<FlowtuneEdge*>& edges);
  // Stops it (call once the workers have stopped).
  void stop();
  ~FlowtuneControl() { stop(); }

 private:
  void run();

  std::vector<FlowtuneUdpPath*> edges_;
  std::atomic<bool> stop_{false};
  std::thread thread_;
};

}  // namespace sluice
