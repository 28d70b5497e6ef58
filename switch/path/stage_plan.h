#pragma once
// Which optional steps of the per-packet stages (docs/architecture.md, "A
// packet's path") run for packets leaving one egress port, and which module
// takes each. Fixed from the configuration when the switch is built, by
// each module's plan() (switch/path/module.h), so that the data path tests
// one bit per step and a module that is off costs a predictable branch, or
// nothing.

#include <bit>
#include <cstddef>
#include <cstdint>
#include <cstring>

#include "lib/config/config.h"
#include "switch/path/module.h"

namespace sluice {

// StagePlan::queue_choice when the class map chooses (no module does).
inline constexpr uint8_t kClassQueues = 0xFF;
// StagePlan::queue_choice of a port that queues by flow (SFQ, FQ): the
// packet's flow hash chooses, in the traffic manager.
inline constexpr uint8_t kFlowQueues = 0xFE;

struct StagePlan {
  // Per step, bit m: module m takes it for packets leaving this port.
  uint8_t steps[static_cast<unsigned>(Step::kCount)] = {};
  // The module that chooses the data queue at admission step 2 instead of
  // the class map (BFC's flow table), or kClassQueues.
  uint8_t queue_choice = kClassQueues;
  // Departure runs at all (some depart or release step is on).
  bool departure = false;
  // Admission's L2 rewrite: data leaves with the 0x88B6 shim, so the device
  // must also receive frames 6 bytes longer than the port's mtu. The shim
  // carries the queue the packet took here (a BFC peer), and the packet's
  // detour count where shim_detours (DIBS with max_detours).
  bool data_shim = false;
  bool shim_detours = false;
  // Real time: a packet that finds the port idle may join the burst the
  // port sends next (Worker::cut_through). The class map chooses, or a
  // module whose choice allows it (kChoiceAtPass), and the only other
  // steps are a refusal's (refuse, dropped: the same for a packet refused
  // as it passes as for one refused at its queue) and the schedule and
  // depart steps of modules that allow them at the pass (kStepsAtPass).
  bool cuts_through = false;
  // A packet that cuts through takes schedule or depart steps at the pass
  // (Worker::depart_run): some module besides the queue choice's has one.
  bool pass_steps = false;
  // A depart step here reads the packet's metadata from the mbuf
  // (kDepartReadsMeta), so a packet that cuts through must carry it.
  bool pass_meta = false;

  bool takes(Step s, unsigned module) const {
    return (steps[static_cast<unsigned>(s)] >> module) & 1;
  }
  void add(Step s, unsigned module) { steps[static_cast<unsigned>(s)] |= 1u << module; }
  // No module takes any step here and the class map chooses: in exact time
  // a packet that finds the port idle may go straight to the wire
  // (EgressPort::pass), as nothing could observe it in its queue. (Asked,
  // not kept: one compare of the first eight bytes.)
  bool straight() const {
    // The steps and the queue choice side by side: one 8-byte compare.
    static_assert(offsetof(StagePlan, queue_choice) == 7 &&
                  std::endian::native == std::endian::little);
    uint64_t v;
    std::memcpy(&v, this, sizeof v);
    return v == uint64_t{kClassQueues} << 56;
  }
};

// Every module's steps for packets leaving `egress` of switch `sw`.
StagePlan plan_stages(const SwitchConfig& sw, const PortConfig& egress);

}  // namespace sluice
