#pragma once
// Parameters of pFabric's end hosts ("pFabric: Minimal Near-Optimal
// Datacenter Transport", Alizadeh et al., SIGCOMM 2013, section 4.2): flows
// start at line rate with a window of one bandwidth-delay product, a fixed
// small retransmission timeout, probe mode after a number of consecutive
// timeouts. The paper states the window and the timeout relative to its
// fabric (a BDP; about three RTTs), so the defaults here are 0 and mean
// "derived from the host's rate and TransportContext::base_rtt_ns";
// docs/transports.md "pFabric" has the rules and sources.

#include <cstdint>

namespace sluice {

struct PfabricParams {
  // The window a flow starts with, in payload bytes; 0: one BDP, the host's
  // link rate times the base RTT (the paper's "initial window equal to the
  // BDP": its flows start at line rate).
  uint64_t init_window_bytes = 0;
  // The retransmission timeout, fixed (no RTT estimate, no backoff); 0:
  // three base RTTs (the paper's "about 3 RTTs" in its setting, 45 us).
  uint64_t rto_ns = 0;
  // Consecutive timeouts (no ACK between them) after which the flow sends
  // only one-byte probes, one per timeout, until an ACK comes back; the
  // paper's implementation uses 5. 0: never.
  uint32_t probe_after = 5;
  // A cap on the window in payload bytes (0: none). None is known from the
  // paper; the public simulations of pFabric cap it near the switch buffer
  // (docs/transports.md "pFabric").
  uint64_t max_window_bytes = 0;
};

}  // namespace sluice
