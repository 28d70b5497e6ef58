// Stage: ingress control, on the lcore that owns the port a control frame
// arrived on. Frames the peer addresses to this switch act on the port's
// own state and are consumed, never forwarded:
// - MAC control (0x8808): a PFC or PAUSE frame pauses the port's data queues
//   (PfcReaction), when the switch runs PFC or PAUSE;
// - sluice control (0x88B5): BFC pause, resume and bitmap drive the port's
//   upstream pause state, on a switch-facing port of a BFC switch;
//   Floodgate credit and sync frames credit the switch's windows and heal
//   losses, on a switch-facing port of a Floodgate switch
//   (worker_floodgate.cc). FG_DST_PAUSE is for hosts: a switch counts it
//   as control_unsupported.
// Flowtune's rate updates will be taken here too.

#include "lib/control/control_intake.h"
#include "lib/mechanisms/pfc/pause_frame.h"
#include "switch/path/worker.h"

namespace sluice {
namespace {

bool is_bfc(ControlType t) {
  return t == ControlType::kBfcPause || t == ControlType::kBfcResume ||
         t == ControlType::kBfcBitmap;
}

bool is_floodgate(ControlType t) {
  return t == ControlType::kFgCredit || t == ControlType::kFgDstPause || t == ControlType::kFgSync;
}

}  // namespace

void Worker::handle_mac_control(PortRuntime& in, rte_mbuf* m, const ParsedPacket& pp,
                                uint64_t now) {
  const uint8_t* frame = rte_pktmbuf_mtod(m, const uint8_t*);
  if (!in.pfc_reaction || !mac_control_dst_ok(frame, in.mac))
    return drop(in.index, m, DropReason::kControlUnsupported);
  in.pfc_reaction->receive(frame + pp.l3_offset, m->data_len - pp.l3_offset, now, in.tm.get());
  touch(in.index);  // the port's own wire: paused or resumed
  counters(in.index).rx_consumed_packets.add();
  rte_pktmbuf_free(m);
}

void Worker::handle_sluice_control(PortRuntime& in, rte_mbuf* m, const ParsedPacket& pp,
                                   uint64_t now) {
  ControlMessage msg;
  const DropReason r = check_control_frame(rte_pktmbuf_mtod(m, const uint8_t*), m->data_len,
                                           pp.l3_offset, in.cfg->role, in.mac, &msg);
  if (r != DropReason::kCount) return drop(in.index, m, r);
  if (is_floodgate(msg.type)) return handle_fg_control(in, m, msg, now);
  if (!in.bfc_upstream || !is_bfc(msg.type))
    return drop(in.index, m, DropReason::kControlUnsupported);
  if (!in.bfc_upstream->on_message(msg)) return drop(in.index, m, DropReason::kControlInvalid);
  touch(in.index);  // the port's own queues: paused or resumed
  PortCounters& c = counters(in.index);
  c.bfc_received[bfc_frame_index(msg.type)].add();
  c.rx_consumed_packets.add();
  rte_pktmbuf_free(m);
}

}  // namespace sluice
