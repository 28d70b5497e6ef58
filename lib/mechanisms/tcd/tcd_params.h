#pragma once
// What a TCD switch's configuration means for one egress port
// (docs/mechanisms/tcd.md, "Configuration"): which pauses can turn its
// queues OFF, its detectors' parameters with the defaults resolved, and the
// traffic manager's ECN marking at enqueue, which TCD replaces.

#include <cstdint>

#include "lib/config/config.h"
#include "lib/mechanisms/tcd/tcd_detector.h"
#include "lib/mechanisms/tcd/tcd_marking.h"

namespace sluice {

// What pauses an egress port's data queues (as the data path wires it); the
// port has one detector per data queue either way:
//  - kBfc: a switch-facing port of a BFC switch; a queue is OFF while a
//    downstream shard holds it;
//  - kPfc: a port taking part in the switch's PFC (or 802.3x PAUSE) that BFC
//    does not own; a queue is OFF while its PFC class (or the whole port,
//    for PAUSE) is paused;
//  - kNone: nothing does; the queues are always ON and TCD marks like DCTCP
//    step marking at K = q_th.
enum class TcdPauseSource { kNone, kPfc, kBfc };
TcdPauseSource tcd_pause_source(const SwitchConfig& sw, const PortConfig& port);

// q_th: tcd.q_th, else the ECN step threshold k; 0 when neither is given
// (the configuration check refuses that).
uint64_t tcd_q_th_bytes(const SwitchConfig& sw);

// max_T_on the port's detectors use when tcd.max_t_on is not given (0 for
// kNone, where no queue is ever OFF):
//  - kPfc: tcd_pfc_max_t_on_ns(hysteresis, rate, hop_rtt / 2), the
//    hysteresis being XOFF - XON;
//  - kBfc: tcd_bfc_max_t_on_ns(Th, rate, hop_rtt) with Th for one active
//    queue, sized from the switch's hop RTT and bfc.th like its own.
uint64_t tcd_default_max_t_on_ns(const SwitchConfig& sw, const PortConfig& port);

// The detector parameters of every queue of the port.
TcdParams tcd_params(const SwitchConfig& sw, const PortConfig& port);
TcdCodepoints tcd_codepoints(const TcdConfig& tcd);

// The ECN marking the port's traffic manager does at enqueue: none on a TCD
// switch (TCD marks at dequeue instead), the port's own ecn or else the
// switch's otherwise.
EcnConfig enqueue_ecn_config(const SwitchConfig& sw);
EcnConfig enqueue_ecn_config(const SwitchConfig& sw, const PortConfig& port);

}  // namespace sluice
