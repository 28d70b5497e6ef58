#pragma once
// HPCC's parameters ("HPCC: High Precision Congestion Control", Li et al.,
// SIGCOMM 2019, section 3, Algorithm 1 and its parameter discussion).
// Defaults are the paper's; where a value needs something the paper leaves
// to the deployment (N, the minimum rate), sluice's choice is said here and
// in the transport notes (transport-doc-hpcc-timely.md).

#include <cstdint>

namespace sluice {

struct HpccParams {
  // eta: target utilization of the most loaded link.
  double eta = 0.95;
  // maxStage: per-RTT additive steps before a multiplicative step is forced.
  uint32_t max_stage = 5;
  // T, the base RTT the window is sized for (rate = W / T); 0 takes the
  // host's TransportContext::base_rtt_ns.
  uint64_t base_rtt_ns = 0;
  // W_AI in bytes; 0 derives it as the paper does, W_init * (1 - eta) / N
  // with W_init = line rate x T and N = expected_flows.
  double w_ai_bytes = 0;
  // N, the expected number of flows sharing a link. 125 makes the derived
  // W_AI a rate step of line rate / 2500 (0.05 / 125), which is the rate_ai
  // HPCC's public ns-3 scripts use (10 Mb/s per 25 Gb/s of NIC rate).
  uint32_t expected_flows = 125;
  // The window never goes below min_rate x T (the rate never below this).
  uint64_t min_rate_bps = 100'000'000;
  // The queue term of a hop's u takes the smaller of the two samples' queue
  // lengths (Algorithm 1 as HPCC's ns-3 implements it); false takes the
  // newer sample's queue alone.
  bool min_qlen = true;
};

}  // namespace sluice
