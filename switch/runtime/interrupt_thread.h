#pragma once
// Runs a function on EAL's interrupt thread, the thread on which drivers run
// their interrupt and control-socket callbacks, so that it cannot interleave
// with them. net_memif needs this: DPDK 22.11's memif tears a port down on
// that thread when its peer disconnects (freeing the port's shared regions)
// without a lock against rte_eth_dev_stop and rte_eth_dev_close on another
// thread, so a port closed while its peer closes too can be freed twice.

#include <chrono>
#include <cstdint>
#include <functional>

namespace sluice {

// Runs `fn` on the interrupt thread (as the callback of an interrupt source
// of its own, registered for the call) and returns once it has run, after
// the thread has taken in every change of its sources made before the
// call. If it has not started within `timeout`, runs `fn` on the calling
// thread instead and returns false.
bool run_on_interrupt_thread(const std::function<void()>& fn,
                             std::chrono::milliseconds timeout = std::chrono::seconds(5));

// Stops and closes ethdev port `eth_port` on the interrupt thread, where a
// net_memif port handles its peer's disconnect, never beside it; in two
// calls, so that the thread has taken in the stop's removal of the control
// channel's source before the close frees the listener's handle.
void stop_and_close_on_interrupt_thread(uint16_t eth_port);

}  // namespace sluice
