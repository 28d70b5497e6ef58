#pragma once
// Which optional steps of the per-packet stages (docs/architecture.md, "A
// packet's path") run for packets leaving one egress port. Fixed from the
// configuration when the switch is built, so that the data path tests one
// field per optional step and a mechanism that is off costs a predictable
// branch, or nothing.

#include "lib/config/config.h"

namespace sluice {

struct StagePlan {
  // Admission, accounting: bytes counted against the ingress port for PFC or
  // PAUSE (the ingress port must take part too; checked per packet).
  bool pfc = false;
  // Admission, queue choice by BFC's flow table instead of the class map;
  // accounting: BFC pause counters. Departure: flow table, resume.
  bool bfc = false;
  // Admission step 1, Floodgate's window / VOQ (a switch-facing egress port
  // of a Floodgate switch); departure: sync and dstPause counts.
  bool fg_window = false;
  // Departure: Floodgate credit for packets that came in on a switch-facing
  // port (every port of a Floodgate switch).
  bool fg_credit = false;
  // Departure: TCD state of the packet's queue and CE / UE marking (every
  // port of a TCD switch; the enqueue ECN marker is then off, see
  // lib/mechanisms/tcd/tcd_params.h).
  bool tcd = false;
  // Admission step 3, refusal: DIBS detours a packet buffer admission
  // refuses to another switch-facing port instead of dropping it (every
  // port of a DIBS switch: a host-facing egress is the incast's last hop).
  bool dibs = false;
  // Departure: a packet leaving the fabric (host-facing port of a DIBS
  // switch) adds its detour count to the histogram of detours per packet.
  bool dibs_exit = false;
  // Departure: HPCC's INT record stamped into transport data frames that
  // ask for it (every port of a switch with `int`).
  bool int_stamp = false;
  // Departure runs at all (some departure step is on).
  bool departure = false;
  // Admission's L2 rewrite: data leaves with the 0x88B6 shim (a
  // switch-facing port of a BFC switch, for the upstream queue, or of a DIBS
  // switch with max_detours, for the detour count), so the device must also
  // receive frames 6 bytes longer than the port's mtu.
  bool data_shim = false;
};

StagePlan plan_stages(const SwitchConfig& sw, const PortConfig& egress);

}  // namespace sluice
