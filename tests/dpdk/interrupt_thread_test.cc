// run_on_interrupt_thread against a real EAL (--no-huge, no devices): the
// function runs on the interrupt thread, after a callback that thread is
// running, and on the caller when the thread stays busy past the timeout.
#include "switch/runtime/interrupt_thread.h"

#include <gtest/gtest.h>
#include <pthread.h>
#include <rte_interrupts.h>
#include <sys/eventfd.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <thread>

#include "tests/dpdk/eal_test_main.h"

namespace sluice {
namespace {

using std::chrono::milliseconds;

TEST(InterruptThread, RunsThereAndReturnsAfterward) {
  const pthread_t caller = pthread_self();
  pthread_t ran_on = caller;
  bool ran = false;
  EXPECT_TRUE(run_on_interrupt_thread([&] {
    ran_on = pthread_self();
    ran = true;
  }));
  EXPECT_TRUE(ran);
  EXPECT_FALSE(pthread_equal(ran_on, caller));
}

// An eventfd whose interrupt callback holds the interrupt thread for
// `hold`, as a driver's control-socket callback would.
class BusyCallback {
 public:
  explicit BusyCallback(milliseconds hold) : hold_(hold) {
    fd_ = eventfd(0, EFD_NONBLOCK);
    handle_ = rte_intr_instance_alloc(RTE_INTR_INSTANCE_F_PRIVATE);
    rte_intr_fd_set(handle_, fd_);
    rte_intr_type_set(handle_, RTE_INTR_HANDLE_EXT);
    registered_ = rte_intr_callback_register(handle_, &BusyCallback::run, this) == 0;
  }
  ~BusyCallback() {
    if (registered_) rte_intr_callback_unregister_sync(handle_, &BusyCallback::run, this);
    rte_intr_instance_free(handle_);
    close(fd_);
  }
  bool registered() const { return registered_; }
  // Fires the callback and returns once it is running.
  void fire() {
    const uint64_t one = 1;
    ASSERT_EQ(write(fd_, &one, sizeof one), static_cast<ssize_t>(sizeof one));
    while (!inside_.load()) std::this_thread::sleep_for(milliseconds(1));
  }
  bool inside() const { return inside_.load(); }
  int finished() const { return finished_.load(); }

 private:
  static void run(void* arg) {
    auto* self = static_cast<BusyCallback*>(arg);
    uint64_t count;
    if (read(self->fd_, &count, sizeof count) < 0) return;
    self->inside_.store(true);
    std::this_thread::sleep_for(self->hold_);
    self->finished_.fetch_add(1);
    self->inside_.store(false);
  }

  milliseconds hold_;
  int fd_ = -1;
  rte_intr_handle* handle_ = nullptr;
  bool registered_ = false;
  std::atomic<bool> inside_{false};
  std::atomic<int> finished_{0};
};

TEST(InterruptThread, NeverBesideARunningCallback) {
  BusyCallback busy(milliseconds(300));
  ASSERT_TRUE(busy.registered());
  busy.fire();
  bool inside_when_run = true;
  int finished_when_run = -1;
  EXPECT_TRUE(run_on_interrupt_thread([&] {
    inside_when_run = busy.inside();
    finished_when_run = busy.finished();
  }));
  EXPECT_FALSE(inside_when_run);
  EXPECT_EQ(finished_when_run, 1);
}

TEST(InterruptThread, RunsOnTheCallerWhenTheThreadStaysBusy) {
  BusyCallback busy(milliseconds(500));
  ASSERT_TRUE(busy.registered());
  busy.fire();
  const pthread_t caller = pthread_self();
  pthread_t ran_on{};
  int runs = 0;
  EXPECT_FALSE(run_on_interrupt_thread(
      [&] {
        ran_on = pthread_self();
        ++runs;
      },
      milliseconds(50)));
  EXPECT_EQ(runs, 1);
  EXPECT_TRUE(pthread_equal(ran_on, caller));
  EXPECT_TRUE(busy.inside());  // still holding the thread: the fallback did not wait
  // The source taken off never runs later.
  std::this_thread::sleep_for(milliseconds(600));
  EXPECT_EQ(runs, 1);
}

}  // namespace
}  // namespace sluice

int main(int argc, char** argv) {
  return sluice::run_tests_with_eal(argc, argv, "intr-thread-test", "64");
}
