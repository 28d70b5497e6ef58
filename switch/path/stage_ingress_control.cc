// Stage: ingress control, on the lcore that owns the port a control frame
// arrived on. Frames the peer addresses to this switch act on the port's
// own state and are consumed, never forwarded:
// - MAC control (0x8808): the module that takes it (PFC: a PFC or PAUSE
//   frame pauses the port's data queues);
// - sluice control (0x88B5), checked (lib/control/control_intake.h), then
//   the module whose frame type it is (BFC pause, resume and bitmap;
//   Floodgate credit and sync).
// A frame no module on the port takes is counted as control_unsupported.

#include "lib/control/control_intake.h"
#include "switch/path/worker.h"

namespace sluice {

void Worker::handle_mac_control(PortRuntime& in, rte_mbuf* m, const ParsedPacket& pp,
                                uint64_t now) {
  bool taken = false;
  each_module([&](auto& mod) {
    if constexpr (requires { mod.mac_control(in, m, pp, now); })
      if (!taken) taken = mod.mac_control(in, m, pp, now);
  });
  if (!taken) drop(in.index, m, DropReason::kControlUnsupported);
}

void Worker::handle_sluice_control(PortRuntime& in, rte_mbuf* m, const ParsedPacket& pp,
                                   uint64_t now) {
  ControlMessage msg;
  const DropReason r = check_control_frame(rte_pktmbuf_mtod(m, const uint8_t*), m->data_len,
                                           pp.l3_offset, in.cfg->role, in.mac, &msg);
  if (r != DropReason::kCount) return drop(in.index, m, r);
  bool taken = false;
  each_module([&](auto& mod) {
    using M = std::decay_t<decltype(mod)>;
    if constexpr (requires { mod.control(in, m, msg, now); })
      if (!taken && M::takes_control(msg.type)) {
        mod.control(in, m, msg, now);
        taken = true;
      }
  });
  if (!taken) drop(in.index, m, DropReason::kControlUnsupported);
}

}  // namespace sluice
