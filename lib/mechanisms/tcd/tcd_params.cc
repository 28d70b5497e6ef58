#include "lib/mechanisms/tcd/tcd_params.h"

#include <memory>
#include <span>
#include <vector>

#include "lib/mechanisms/bfc/hop_rtt.h"
#include "lib/mechanisms/bfc/pause_threshold.h"
#include "lib/mechanisms/pfc/pfc_ingress.h"
#include "lib/mechanisms/tcd/max_t_on.h"

namespace sluice {
namespace {

// Ports whose peer a BFC switch pauses per queue (and whose hop RTT sizes
// its HRTT): switches, and replay hosts with a BFC NIC.
bool bfc_pausable_peer(const PortConfig& p) {
  return p.role == PortRole::kSwitch || (p.pcap && p.nic.mode == NicMode::kBfc);
}

uint64_t switch_hop_rtt_ns(const SwitchConfig& sw) {
  std::vector<uint64_t> rtts;
  std::unique_ptr<bool[]> facing = std::make_unique<bool[]>(sw.ports.size());
  for (const PortConfig& p : sw.ports) {
    facing[rtts.size()] = bfc_pausable_peer(p);
    rtts.push_back(p.hop_rtt_ns);
  }
  return upstream_hop_rtt_ns(rtts, std::span<const bool>(facing.get(), rtts.size()));
}

}  // namespace

TcdPauseSource tcd_pause_source(const SwitchConfig& sw, const PortConfig& port) {
  // BFC owns a switch-facing port's queue pauses; PFC there would not run.
  if (sw.bfc.enabled && port.role == PortRole::kSwitch) return TcdPauseSource::kBfc;
  if (sw.pfc.mode != PfcGenerationMode::kOff && port.pfc.enabled) return TcdPauseSource::kPfc;
  return TcdPauseSource::kNone;
}

uint64_t tcd_q_th_bytes(const SwitchConfig& sw) {
  return sw.tcd.q_th_bytes != 0 ? sw.tcd.q_th_bytes : sw.tm.ecn.step_k_bytes;
}

uint64_t tcd_default_max_t_on_ns(const SwitchConfig& sw, const PortConfig& port) {
  switch (tcd_pause_source(sw, port)) {
    case TcdPauseSource::kPfc: {
      const uint64_t hysteresis = sw.pfc.hysteresis_bytes != 0
                                      ? sw.pfc.hysteresis_bytes
                                      : default_pfc_hysteresis_bytes(port.mtu);
      return tcd_pfc_max_t_on_ns(hysteresis, port.rate_bps, port.hop_rtt_ns / 2);
    }
    case TcdPauseSource::kBfc: {
      const uint64_t th_ns = bfc_th_time_ns(sw.bfc.th_ns, switch_hop_rtt_ns(sw));
      const uint64_t th = pause_threshold_bytes(th_ns, port.rate_bps, 1);
      return tcd_bfc_max_t_on_ns(th, port.rate_bps, port.hop_rtt_ns);
    }
    case TcdPauseSource::kNone:
      break;
  }
  return 0;
}

TcdParams tcd_params(const SwitchConfig& sw, const PortConfig& port) {
  TcdParams p;
  p.q_th_bytes = tcd_q_th_bytes(sw);
  p.max_t_on_ns = sw.tcd.max_t_on_ns != 0 ? sw.tcd.max_t_on_ns : tcd_default_max_t_on_ns(sw, port);
  p.queue_falling = sw.tcd.queue_falling;
  p.falling_interval_ns =
      sw.tcd.falling_interval_ns != 0 ? sw.tcd.falling_interval_ns : port.hop_rtt_ns;
  return p;
}

TcdCodepoints tcd_codepoints(const TcdConfig& tcd) {
  return TcdCodepoints{tcd.ce_codepoint, tcd.ue_codepoint};
}

EcnConfig enqueue_ecn_config(const SwitchConfig& sw) {
  if (!sw.tcd.enabled) return sw.tm.ecn;
  EcnConfig off = sw.tm.ecn;
  off.mode = EcnMode::kOff;
  return off;
}

EcnConfig enqueue_ecn_config(const SwitchConfig& sw, const PortConfig& port) {
  if (sw.tcd.enabled || !port.ecn) return enqueue_ecn_config(sw);
  return *port.ecn;
}

}  // namespace sluice
