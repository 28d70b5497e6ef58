#include "switch/emulator/window_sync.h"

#include <sched.h>

#include <algorithm>
#include <chrono>

namespace sluice {
namespace {

// Spins this often before giving the core away: lcores that share cores
// (more lcores than cores) must not starve the one the others wait for.
constexpr unsigned kSpinsBeforeYield = 4096;

void pause() {
#if defined(__x86_64__)
  __builtin_ia32_pause();
#endif
}

}  // namespace

WindowSync::WindowSync(unsigned lcores, uint64_t lookahead_ns)
    : lcores_(lcores), lookahead_ns_(lookahead_ns), slots_(std::make_unique<Slot[]>(lcores)) {}

// A counting barrier: the last to arrive starts the next generation.
void WindowSync::wait() {
  const auto t0 = std::chrono::steady_clock::now();
  wait_for_all();
  wait_ns_.fetch_add(static_cast<uint64_t>(std::chrono::duration_cast<std::chrono::nanoseconds>(
                                               std::chrono::steady_clock::now() - t0)
                                               .count()),
                     std::memory_order_relaxed);
}

void WindowSync::wait_for_all() {
  const uint64_t gen = generation_.load(std::memory_order_acquire);
  if (arrived_.fetch_add(1, std::memory_order_acq_rel) + 1 == lcores_) {
    arrived_.store(0, std::memory_order_relaxed);
    generation_.store(gen + 1, std::memory_order_release);
    return;
  }
  unsigned spins = 0;
  while (generation_.load(std::memory_order_acquire) == gen) {
    if (aborted_.load(std::memory_order_relaxed)) return;
    if (++spins % kSpinsBeforeYield == 0) {
      sched_yield();
    } else {
      pause();
    }
  }
}

// Every lcore writes its own slot, then all read all slots after the
// barrier; the next writes come only after the window's end barrier, which
// every lcore reaches after reading, so one set of slots is enough.
uint64_t WindowSync::agree_start(unsigned slot, uint64_t next_due, bool* stop) {
  slots_[slot].next_due.store(next_due, std::memory_order_relaxed);
  slots_[slot].stop.store(*stop, std::memory_order_relaxed);
  wait();
  uint64_t start = UINT64_MAX;
  *stop = aborted_.load(std::memory_order_relaxed);
  for (unsigned i = 0; i < lcores_; ++i) {
    *stop = *stop || slots_[i].stop.load(std::memory_order_relaxed);
    start = std::min(start, slots_[i].next_due.load(std::memory_order_relaxed));
  }
  if (slot == 0) windows_.fetch_add(1, std::memory_order_relaxed);
  return start;
}

void WindowSync::end_window() { wait(); }

void WindowSync::abort() { aborted_.store(true, std::memory_order_relaxed); }

}  // namespace sluice
