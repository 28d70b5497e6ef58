#pragma once
// Internal links between switch instances of one process. A direction is an
// SPSC rte_ring from the sending port's owner lcore to the receiving port's
// owner; each frame carries its due time (LinkTiming) in the mbuf and is
// handed to the receiver no earlier than that, in order.

#include <rte_mbuf.h>

#include <cstdint>

#include "lib/tm/latency_histogram.h"
#include "switch/runtime/runtime.h"

namespace sluice {

// Takes up to n frames (as many as the ring has room for) and returns how
// many it took; the rest stay with the caller. Lost frames (loss probability)
// are freed and counted in *lost; they count as taken. *first_due is when
// the first frame that was not lost arrives (unchanged if none).
unsigned link_send(LinkDirection& d, uint64_t now_ns, rte_mbuf** pkts, unsigned n, uint64_t* lost,
                   uint64_t* first_due);

// Frames whose due time has come, up to n, in order; records how late each is.
unsigned link_receive(LinkDirection& d, LinkRxStage& stage, uint64_t now_ns, rte_mbuf** pkts,
                      unsigned n, LatencyHistogram& lateness);

// Exact fabric time: when the next frame on the link arrives (UINT64_MAX:
// none on it). Takes frames off the ring into the stage to look.
uint64_t link_next_due(LinkDirection& d, LinkRxStage& stage);

// Frees every frame still on the link (after the workers stopped); returns the count.
unsigned link_discard(LinkDirection& d, LinkRxStage& stage);

}  // namespace sluice
