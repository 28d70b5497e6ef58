#pragma once
// Runs a function on EAL's interrupt thread, the thread on which drivers run
// their interrupt and control-socket callbacks, so that it cannot interleave
// with them. net_memif needs this: DPDK 22.11's memif tears a port down on
// that thread when its peer disconnects (freeing the port's shared regions)
// without a lock against rte_eth_dev_stop and rte_eth_dev_close on another
// thread, so a port closed while its peer closes too can be freed twice.

#include <chrono>
#include <functional>

namespace sluice {

// Runs `fn` on the interrupt thread (as the callback of an interrupt source
// of its own, registered for the call) and returns once it has run, after
// the thread has taken in every change of its sources made before the
// call. If it has not started within `timeout`, runs `fn` on the calling
// thread instead and returns false.
bool run_on_interrupt_thread(const std::function<void()>& fn,
                             std::chrono::milliseconds timeout = std::chrono::seconds(5));

}  // namespace sluice
