// rte_intr_instance_alloc and its setters are experimental in DPDK 22.11.
#define ALLOW_EXPERIMENTAL_API
#include "switch/runtime/interrupt_thread.h"

#include <rte_ethdev.h>
#include <rte_interrupts.h>
#include <sys/eventfd.h>
#include <unistd.h>

#include <atomic>
#include <thread>

namespace sluice {
namespace {

// One call's source: an eventfd made readable before it is registered, so
// its callback runs once the interrupt thread has rebuilt its wait set with
// it, which it does after every change of its sources made before.
struct Job {
  const std::function<void()>* fn = nullptr;
  std::atomic<bool> done{false};
  int fd = -1;
  rte_intr_handle* handle = nullptr;
};

// A job whose callback is not registered (any more): nothing refers to it.
void release(Job* job) {
  if (job->handle != nullptr) rte_intr_instance_free(job->handle);
  if (job->fd >= 0) close(job->fd);
  delete job;
}

void run_job(void* arg) {
  auto* job = static_cast<Job*>(arg);
  uint64_t count;
  if (read(job->fd, &count, sizeof count) != sizeof count) return;  // run once
  (*job->fn)();
  job->done.store(true, std::memory_order_release);
}

}  // namespace

bool run_on_interrupt_thread(const std::function<void()>& fn, std::chrono::milliseconds timeout) {
  // Never freed: the source stays registered, because unregistering it
  // makes the interrupt thread walk its sources again, and a net_memif
  // server's close leaves its listener's source there with the handle freed
  // (DPDK 22.11), which that walk would read, possibly after EAL's cleanup
  // has unmapped it. A call or two per port at shutdown.
  auto* job = new Job;
  job->fn = &fn;
  job->fd = eventfd(1, EFD_NONBLOCK);
  job->handle = rte_intr_instance_alloc(RTE_INTR_INSTANCE_F_PRIVATE);
  if (job->fd < 0 || job->handle == nullptr || rte_intr_fd_set(job->handle, job->fd) != 0 ||
      rte_intr_type_set(job->handle, RTE_INTR_HANDLE_EXT) != 0 ||
      rte_intr_callback_register(job->handle, run_job, job) != 0) {
    release(job);
    fn();
    return false;
  }
  const auto deadline = std::chrono::steady_clock::now() + timeout;
  while (!job->done.load(std::memory_order_acquire) && std::chrono::steady_clock::now() < deadline)
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  if (job->done.load(std::memory_order_acquire)) return true;
  // Not run within the timeout: take the callback off unless it is running
  // (-EAGAIN), in which case it finishes.
  if (rte_intr_callback_unregister(job->handle, run_job, job) > 0) {
    release(job);
    fn();
    return false;
  }
  while (!job->done.load(std::memory_order_acquire))
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  return true;
}

void stop_and_close_on_interrupt_thread(uint16_t eth_port) {
  run_on_interrupt_thread([eth_port] { rte_eth_dev_stop(eth_port); });
  run_on_interrupt_thread([eth_port] { rte_eth_dev_close(eth_port); });
}

}  // namespace sluice
