#pragma once
// Several worker lcores running one fabric (docs/emulator.md, "Several
// lcores"): they agree on where the next window of fabric time starts (the
// earliest instant anything is due on any of them), each handles what is
// due before the window ends (its start plus the partition's lookahead),
// and all meet before the next. Nothing an lcore does in a window reaches
// another before the window ends (lib/emulator/partition.h), so each runs
// its window alone, with no lock, and the run is the one a single lcore
// would make.

#include <atomic>
#include <cstdint>
#include <memory>

namespace sluice {

class WindowSync {
 public:
  WindowSync(unsigned lcores, uint64_t lookahead_ns);

  uint64_t lookahead_ns() const { return lookahead_ns_; }
  // Each lcore says when it is next due (and whether it was asked to stop);
  // returns the earliest of all lcores' once all have said. *stop: some
  // lcore was asked to stop, or gave up. A barrier.
  uint64_t agree_start(unsigned slot, uint64_t next_due, bool* stop);
  // The window is done on this lcore; returns once it is on all. A barrier.
  void end_window();
  // An lcore that cannot go on (time stopped moving) releases the others:
  // their barriers return at once and agree_start says stop.
  void abort();

  // Time spent waiting at the barriers, summed over lcores, and windows run.
  uint64_t windows() const { return windows_.load(std::memory_order_relaxed); }
  uint64_t wait_ns() const { return wait_ns_.load(std::memory_order_relaxed); }

 private:
  void wait();  // wait_for_all, timed
  void wait_for_all();

  unsigned lcores_;
  uint64_t lookahead_ns_;
  std::atomic<unsigned> arrived_{0};
  std::atomic<uint64_t> generation_{0};
  std::atomic<bool> aborted_{false};
  std::atomic<uint64_t> windows_{0};
  std::atomic<uint64_t> wait_ns_{0};  // summed over lcores
  struct alignas(64) Slot {
    std::atomic<uint64_t> next_due{0};
    std::atomic<bool> stop{false};
  };
  std::unique_ptr<Slot[]> slots_;
};

}  // namespace sluice
