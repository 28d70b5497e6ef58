#pragma once
// The modules of the path, in the order every stage visits them
// (switch/path/module.h). Adding a mechanism is a folder under
// switch/mechanisms/ and one line here (and its configuration section in
// lib/mechanisms/sections.h).
//
// The order is part of what a run does: where two modules act on one
// packet in one stage, the earlier goes first (PFC counts a packet's bytes
// before BFC judges its queue; Floodgate's forward step records what
// Flowtune's pacer may hold), and in exact fabric time elements due at one
// instant go ports first, then each module's in this order
// (docs/emulator.md, "Order at one instant").

#include "switch/mechanisms/bfc/bfc_module.h"
#include "switch/mechanisms/dibs/dibs_module.h"
#include "switch/mechanisms/floodgate/floodgate_module.h"
#include "switch/mechanisms/flowtune/flowtune_module.h"
#include "switch/mechanisms/int/int_module.h"
#include "switch/mechanisms/pfc/pfc_module.h"
#include "switch/mechanisms/tcd/tcd_module.h"
#include "switch/ops/queue_trace_module.h"
#include "switch/path/module.h"

namespace sluice {

using Modules = ModuleList<PfcModule, BfcModule, FloodgateModule, TcdModule, DibsModule, IntModule,
                           QueueTraceModule, FlowtuneModule>;

// A module's id (M::kId: its bit in StagePlan, its slot in the runtime's
// arrays) is its place in the list.
template <class... Ms>
constexpr bool ids_are_places(ModuleList<Ms...>*) {
  return ((Ms::kId == ModuleList<Ms...>::template index_of<Ms>()) && ...);
}
static_assert(ids_are_places(static_cast<Modules*>(nullptr)));

// The modules that take a forward step, a bit per id (as
// PortRuntime::in_steps): such a step may keep a packet or change state a
// later packet's routing reads, and it keeps its state on the lcore that
// receives the port.
inline uint8_t forward_step_modules() {
  uint8_t bits = 0;
  Modules::each_type([&]<class M>() {
    if constexpr (requires(M & m, PortRuntime & in, rte_mbuf * b, const ParsedPacket& pp) {
                    m.forward(in, b, pp, uint64_t{0});
                  })
      bits |= static_cast<uint8_t>(1u << M::kId);
  });
  return bits;
}

// Of those, the modules whose forward step must run packet by packet, each
// just before its packet's admission: all but those that say
// kForwardInBurst (module.h).
inline uint8_t per_packet_forward_modules() {
  uint8_t bits = 0;
  Modules::each_type([&]<class M>() {
    if constexpr (requires { M::kForwardInBurst; })
      if constexpr (M::kForwardInBurst) return;
    bits |= static_cast<uint8_t>(forward_step_modules() & (1u << M::kId));
  });
  return bits;
}

}  // namespace sluice
