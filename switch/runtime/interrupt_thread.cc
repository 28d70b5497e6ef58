#include "switch/runtime/interrupt_thread.h"

#include <rte_alarm.h>

#include <atomic>
#include <thread>

namespace sluice {
namespace {

struct Job {
  const std::function<void()>* fn;
  std::atomic<bool> done{false};
};

void run_job(void* arg) {
  auto* job = static_cast<Job*>(arg);
  (*job->fn)();
  job->done.store(true, std::memory_order_release);
}

}  // namespace

bool run_on_interrupt_thread(const std::function<void()>& fn, std::chrono::milliseconds timeout) {
  Job job{&fn};
  if (rte_eal_alarm_set(1, run_job, &job) != 0) {
    fn();
    return false;
  }
  const auto deadline = std::chrono::steady_clock::now() + timeout;
  while (!job.done.load(std::memory_order_acquire) && std::chrono::steady_clock::now() < deadline)
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  if (job.done.load(std::memory_order_acquire)) return true;
  // rte_eal_alarm_cancel removes an alarm that has not started and waits for
  // one that is running, so after it `job` is either never run or done.
  if (rte_eal_alarm_cancel(run_job, &job) > 0) {
    fn();
    return false;
  }
  return true;
}

}  // namespace sluice
