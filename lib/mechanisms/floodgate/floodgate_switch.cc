#include "lib/mechanisms/floodgate/floodgate_switch.h"

namespace sluice {

FloodgateSwitch::FloodgateSwitch(const FloodgateSwitchConfig& cfg, SharedBuffer* buffer)
    : cfg_(cfg), buffer_(buffer), windows_(cfg.max_destinations), voqs_(cfg.voqs, cfg.voq_packets) {
  // dstPause pairs and sync pairs share the window table's bound: one pair
  // per destination and port is what the paper's memory figure counts.
  if (cfg.dst_pause)
    dst_pause_.emplace(cfg.max_destinations, cfg.dst_pause_bytes, cfg.dst_pause_hysteresis_bytes);
  if (cfg.sync) {
    sync_sender_.emplace(cfg.max_destinations);
    sync_receiver_.emplace(cfg.max_destinations, cfg.sync_cut_ns);
  }
}

FgAdmission FloodgateSwitch::admit_without_window(const FgPacket& p) {
  uncontrolled_packets.add();
  return {FgVerdict::kUncontrolled, DropReason::kCount, enter(p)};
}

// The VOQ is a queue of the shared buffer like any egress queue: its bytes
// count against the buffer and it is judged by the same dynamic threshold.
FgAdmission FloodgateSwitch::hold(DstWindow& w, const FgPacket& p) {
  const uint64_t depth = voqs_.bytes_for(w);
  // Either refusal is counted as voq_full (SPEC 4.1), so that a drop at
  // the VOQ is told apart from one at an egress queue.
  FgAdmission a{FgVerdict::kRefused, DropReason::kVoqFull, DstPauseSignal::kNone};
  if (!buffer_->try_charge(depth, p.bytes)) return a;
  if (!voqs_.hold(w, VoqPacket{p.handle, p.bytes, p.egress})) {
    buffer_->release(p.bytes);
    return a;
  }
  held_packets.add();
  if (voqs_.bytes() > peak_voq_bytes.get()) peak_voq_bytes.set(voqs_.bytes());
  const bool mark = cfg_.voq_ecn_bytes != 0 && p.ecn_capable && depth > cfg_.voq_ecn_bytes;
  if (mark) voq_marks.add();
  a.verdict = mark ? FgVerdict::kHeldMarked : FgVerdict::kHeld;
  a.pause = enter(p);
  return a;
}

bool FloodgateSwitch::withhold(uint32_t dst) const {
  // Nothing held anywhere: nothing to hold credit back for (the usual case).
  if (!may_withhold()) return false;
  const DstWindow* w = windows_.find(dst);
  return w != nullptr && w->voq_bytes > cfg_.delay_credit_bytes;
}

}  // namespace sluice
