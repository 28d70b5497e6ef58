#include "switch/mechanisms/floodgate/floodgate_module.h"

#include <algorithm>
#include <span>

#include "lib/net/ethertypes.h"
#include "lib/net/ipv4_rewrite.h"
#include "switch/emulator/fabric_loop.h"
#include "switch/path/worker.h"

namespace sluice {
namespace {

constexpr unsigned kVoqDrainBudget = 1024;  // packets released per drain call
constexpr uint32_t kMaxListEntries = 256;   // entries built into one frame at most

// The bytes a window counts for a packet: the frame as it leaves toward the
// next switch (a fresh Ethernet header, no VLAN tag or shim), padded to the
// Ethernet minimum as the wire pads it, so both ends of a link count the
// same whatever tags it arrived with.
uint16_t fg_frame_bytes(uint32_t pkt_len, uint32_t l3_offset) {
  const uint32_t frame = pkt_len - l3_offset + kEthHeaderLen;
  return static_cast<uint16_t>(std::clamp<uint32_t>(frame, kEthMinFrameLen, UINT16_MAX));
}

// The most a list frame (credit, sync) out of `port` may hold: one MTU of
// payload, within an mbuf.
uint32_t list_frame_cap(const PortRuntime& port) {
  return std::min<uint32_t>(kEthHeaderLen + port.mtu,
                            RTE_MBUF_DEFAULT_BUF_SIZE - RTE_PKTMBUF_HEADROOM);
}

// Index of a Floodgate frame type in FgFrames' arrays.
unsigned frame_index(ControlType t) {
  return t == ControlType::kFgCredit ? 0 : t == ControlType::kFgDstPause ? 1 : 2;
}

FloodgateModuleState* state(const Runtime& rt) {
  return static_cast<FloodgateModuleState*>(rt.module_state[FloodgateModule::kId].get());
}

// One switch's timers as an element of the emulator's calendar: credit due
// at its ingresses, VOQs to drain after a refund, loss recovery's sync.
class FloodgateTimers final : public CalendarElement {
 public:
  FloodgateTimers(FloodgateModule& m, uint16_t sw) : m_(m), sw_(sw) {}
  uint64_t due(uint64_t now, uint8_t) override { return m_.due_of(sw_, now); }
  uint8_t run(uint64_t now) override {
    m_.timers_of(sw_, now);
    return kAllParts;
  }
  const char* name() const override { return "Floodgate timers"; }

 private:
  FloodgateModule& m_;
  uint16_t sw_;
};

bool is_fg_credit_frame(const rte_mbuf* m) {
  const uint8_t* f = rte_pktmbuf_mtod(m, const uint8_t*);
  return m->data_len > kEthHeaderLen + 3 && load_be16(f + 12) == kEtherTypeSluiceControl &&
         f[kEthHeaderLen + 3] == static_cast<uint8_t>(ControlType::kFgCredit);
}

}  // namespace

// Admission step 1. True: the packet goes on to queue choice (its window
// was debited, or it has none); false: it waits in a VOQ or was dropped.
bool FloodgateModule::gate(PortRuntime& out, rte_mbuf* m, const MbufMeta& meta, uint64_t now) {
  FgSwitch& fg = *switch_[out.switch_index];
  MbufExtra* x = mbuf_extra(m);
  FgPacket p;
  p.handle = reinterpret_cast<uint64_t>(m);
  p.dst = x->fg.dst;
  p.bytes = x->fg.bytes;
  p.egress = out.index;
  p.initial = at(out)->initial_window;
  p.host_in = fg.host_index[x->ingress];
  p.ecn_capable = meta.ecn_capable;
  const FgAdmission a = fg.state->admit(p);
  if (a.pause != DstPauseSignal::kNone)
    send_dst_pause(fg, p.host_in, p.dst, a.pause == DstPauseSignal::kPause, now);
  switch (a.verdict) {
    case FgVerdict::kSend:
    case FgVerdict::kUncontrolled:
      return true;
    case FgVerdict::kRefused:
      w_.drop_data(out, m, a.reason, false, now);
      return false;
    case FgVerdict::kHeldMarked:
      w_.mark_ce(w_.counters(out.index), rte_pktmbuf_mtod(m, uint8_t*) + meta.l3_offset);
      [[fallthrough]];
    case FgVerdict::kHeld:
      break;
  }
  // Held bytes count against their ingress (PFC) like queued ones.
  w_.hold(out, m, meta);
  return false;
}

// Packets whose windows allow leave the VOQs for their egress queues.
void FloodgateModule::drain(FgSwitch& fg, uint64_t now) {
  fg.state->drain(kVoqDrainBudget, [&](const VoqPacket& p) {
    auto* m = reinterpret_cast<rte_mbuf*>(p.handle);
    PortRuntime& out = w_.port(p.egress);
    w_.unhold(out, m);  // counted again if admitted
    w_.admit_released(out, m, now);
  });
}

// Forward, for a Floodgate switch: what the window, credit and sync steps
// need, and the bytes received on a switch-facing port for loss recovery.
bool FloodgateModule::forward(PortRuntime& in, rte_mbuf* m, const ParsedPacket& pp, uint64_t now) {
  forward_run(in, &m, &pp, nullptr, 1, now);
  return true;
}

void FloodgateModule::forward_run(PortRuntime& in, rte_mbuf* const* pkts, const ParsedPacket* pps,
                                  PortRuntime* const* outs, unsigned n, uint64_t now) {
  const FgSwitch& fg = *switch_[in.switch_index];
  const uint32_t i = fg.switch_index[in.index];
  SyncReceiver* r = i != kNoFgIndex ? fg.state->sync_receiver() : nullptr;
  for (unsigned k = 0; k < n; ++k) {
    if (outs != nullptr && outs[k] == nullptr) continue;  // dropped by routing
    MbufExtra* x = mbuf_extra(pkts[k]);
    x->fg.dst = pps[k].dst_ip;
    x->fg.bytes = fg_frame_bytes(rte_pktmbuf_pkt_len(pkts[k]), pps[k].l3_offset);
    if (r != nullptr) r->on_received(i, x->fg.dst, x->fg.bytes, now);
  }
}

// Departure: credit owed upstream for a packet from a switch-facing port;
// toward a switch-facing port, the sync and dstPause counts.
void FloodgateModule::depart(PortRuntime& port, const TmPacket& p, uint64_t now) {
  depart_run(port, &p, 1, now);
}

// What every packet of the run shares is looked up once: the switch, its
// aggregator and whether the port is gated. The switch's timers are asked
// again once, after the run (exact time asks after the handling anyway).
void FloodgateModule::depart_run(PortRuntime& port, const TmPacket* pkts, unsigned n,
                                 uint64_t now) {
  FgSwitch& fg = *switch_[port.switch_index];
  CreditAggregator* const credits = credits_[port.switch_index];
  const bool gated = port.plan.takes(Step::kGate, kId);
  SyncSender* sync = gated ? fg.state->sync_sender() : nullptr;
  bool earned = false;
  for (unsigned k = 0; k < n; ++k) {
    const MbufExtra* x = mbuf_extra(static_cast<rte_mbuf*>(pkts[k].handle));
    const uint32_t in = fg.switch_index[x->ingress];
    // The aggregator takes the credit unless the ingress's list is full;
    // then the frame goes first (out of line: rare).
    if (in != kNoFgIndex) {
      if (!credits->add(in, x->fg.dst, x->fg.bytes)) [[unlikely]]
        earn_credit(port.switch_index, in, x->fg.dst, x->fg.bytes, now);
      earned = true;
    }
    if (!gated) continue;
    if (sync != nullptr) sync->on_sent(fg.switch_index[port.index], x->fg.dst, x->fg.bytes);
    left(fg, *x, now);
  }
  if (earned) touch_timers(port.switch_index);  // exact time: its credit falls due
}

// A packet admission counted for dstPause left the switch: its host may be
// told to resume.
void FloodgateModule::left(FgSwitch& fg, const MbufExtra& x, uint64_t now) {
  const uint32_t host = fg.host_index[x.ingress];
  const DstPauseSignal sig = fg.state->left(host, x.fg.dst, x.fg.bytes);
  if (sig != DstPauseSignal::kNone)
    send_dst_pause(fg, host, x.fg.dst, sig == DstPauseSignal::kPause, now);
}

// A data packet dropped in the switch still owes its upstream the credit
// (else the upstream's window shrinks for good); one whose window was
// debited here gets it back, and leaves the dstPause count.
void FloodgateModule::dropped(PortRuntime& out, rte_mbuf* m, bool debited, uint64_t now) {
  FgSwitch& fg = *switch_[out.switch_index];
  const MbufExtra* x = mbuf_extra(m);
  const uint32_t in = fg.switch_index[x->ingress];
  if (in != kNoFgIndex) earn_credit(out.switch_index, in, x->fg.dst, x->fg.bytes, now);
  if (!debited) return;
  fg.state->refund(x->fg.dst, x->fg.bytes);
  drain_due_[out.switch_index] = 1;
  touch_timers(out.switch_index);
  left(fg, *x, now);
}

// Ingress control: credit and sync from the downstream of a switch-facing
// port. A switch never obeys dstPause (only hosts do).
void FloodgateModule::control(PortRuntime& in, rte_mbuf* m, const ControlMessage& msg,
                              uint64_t now) {
  FgSwitch* fg = switch_[in.switch_index];
  const uint32_t i = fg != nullptr ? fg->switch_index[in.index] : kNoFgIndex;
  const bool usable = i != kNoFgIndex &&
                      (msg.type == ControlType::kFgCredit ||
                       (msg.type == ControlType::kFgSync && fg->state->sync_receiver() != nullptr));
  if (!usable) return w_.drop(in.index, m, DropReason::kControlUnsupported);
  (*frames_)[in.index].received[frame_index(msg.type)].add();
  if (msg.type == ControlType::kFgCredit) {
    take_credit(*fg, i, msg);
    drain(*fg, now);
  } else {
    take_sync(*fg, in.switch_index, i, msg, now);
  }
  w_.counters(in.index).rx_consumed_packets.add();
  rte_pktmbuf_free(m);
}

void FloodgateModule::take_credit(FgSwitch& fg, uint32_t ingress, const ControlMessage& msg) {
  uint64_t bytes = 0;
  for (uint32_t e = 0; e < msg.count; ++e) {
    const CreditEntry c = msg.credit(e);
    fg.state->credit(ingress, c.dst_ip, c.credit_bytes);
    bytes += c.credit_bytes;
  }
  (*frames_)[fg.switch_ports[ingress]].credit_received_bytes.add(bytes);
}

// What the sync shows lost (data that never arrived, credit the upstream
// never got) is owed to the upstream as credit again.
void FloodgateModule::take_sync(FgSwitch& fg, uint16_t sw, uint32_t ingress,
                                const ControlMessage& msg, uint64_t now) {
  SyncReceiver& r = *fg.state->sync_receiver();
  for (uint32_t e = 0; e < msg.count; ++e) {
    const SyncEntry s = msg.sync(e);
    const SyncHeal h = r.on_sync(ingress, s, now);
    const uint64_t owed = h.lost_data_bytes + h.lost_credit_bytes;
    if (owed != 0) earn_credit(sw, ingress, s.dst_ip, owed, now);
  }
}

void FloodgateModule::earn_credit(uint16_t sw, uint32_t ingress, uint32_t dst, uint64_t bytes,
                                  uint64_t now) {
  CreditAggregator& a = *credits_[sw];
  while (bytes != 0) {
    const auto part = static_cast<uint32_t>(std::min<uint64_t>(bytes, UINT32_MAX));
    if (!a.add(ingress, dst, part)) {
      // The ingress's list is full: its frame goes first. Were every entry
      // left in it (all withheld, or no frame could be built), this credit
      // is lost, counted; only sync heals it (docs/mechanisms/floodgate.md,
      // "In the data path").
      send_credit(sw, ingress, now);
      if (!a.add(ingress, dst, part)) {
        (*frames_)[switch_[sw]->switch_ports[ingress]].credit_lost_bytes.add(bytes);
        return;
      }
    }
    bytes -= part;
  }
  touch_timers(sw);
}

// An FG_CREDIT frame of entries[0..n) for the port's peer, or nullptr (no
// mbuf, peer MAC unknown; counted in control_lost).
rte_mbuf* FloodgateModule::credit_frame(PortRuntime& port, const CreditEntry* entries, uint32_t n) {
  uint8_t* frame;
  MacAddr dst;
  const uint32_t cap = list_frame_cap(port);
  rte_mbuf* m = w_.new_frame_to_peer(port, &frame, &dst, cap);
  if (m == nullptr) return nullptr;
  const ControlListFrame f =
      build_fg_credit(frame, cap, port.mtu, dst, port.mac, w_.shard(port.switch_index),
                      std::span<const CreditEntry>(entries, n));
  rte_pktmbuf_trim(m, static_cast<uint16_t>(cap - f.len));
  return m;
}

// One or more FG_CREDIT frames out of switch-facing ingress `ingress`,
// holding back (delayCredit) what the owner's VOQs say to.
void FloodgateModule::send_credit(uint16_t sw, uint32_t ingress, uint64_t now) {
  FgSwitch& fg = *switch_[sw];
  CreditAggregator& a = *credits_[sw];
  PortRuntime& port = w_.port(fg.switch_ports[ingress]);
  // The ingress is switch-facing, so its owner is the windows' owner.
  const bool owner = port.owner_slot == w_.slot();
  const uint32_t max =
      std::min(kMaxListEntries, control_entries_per_frame(port.mtu, kFgCreditEntryLen));
  CreditEntry entries[kMaxListEntries];
  uint32_t n;
  do {
    // Nothing held in a VOQ (the usual case): no entry to look up.
    if (owner && fg.state->may_withhold()) {
      n = a.take(ingress, now, entries, max, [&](uint32_t dst) { return fg.state->withhold(dst); });
    } else {
      n = a.take(ingress, now, entries, max, [](uint32_t) { return false; });
    }
    if (n == 0) return;
    rte_mbuf* m = credit_frame(port, entries, n);
    // Queued here, the frame is the port's; toward another lcore's port it
    // is handed over (a full ring or control queue there loses it, counted,
    // and only FG_SYNC heals that). Otherwise the credit is kept for the
    // next try: it is never lost in this switch.
    if (m == nullptr || (owner && !w_.send_control(port, now, m))) {
      for (uint32_t e = 0; e < n; ++e) a.add(ingress, entries[e].dst_ip, entries[e].credit_bytes);
      a.retry_at(ingress, now + EventCalendar::kRetryNs);
      return;
    }
    const uint32_t frame_len = m->pkt_len;  // before another lcore may send it
    if (owner)
      count_credit_sent(port, m, now);
    else
      w_.send_from(port, m, now);
    FgFrames& c = (*frames_)[port.index];
    c.sent[frame_index(ControlType::kFgCredit)].add();
    c.control_tx_bytes.add(frame_len);
    uint64_t bytes = 0;
    for (uint32_t e = 0; e < n; ++e) bytes += entries[e].credit_bytes;
    c.credit_sent_bytes.add(bytes);
  } while (n == max);
}

// Loss recovery counts the credit that leaves a switch-facing port, on the
// port's owner: credit built on another lcore is counted as it passes.
void FloodgateModule::control_passing(PortRuntime& port, const rte_mbuf* m, uint64_t now) {
  count_credit_sent(port, m, now);
}

void FloodgateModule::count_credit_sent(PortRuntime& port, const rte_mbuf* m, uint64_t now) {
  const FgSwitch* fg = switch_[port.switch_index];
  if (fg == nullptr || fg->state->sync_receiver() == nullptr || !is_fg_credit_frame(m)) return;
  const uint32_t i = fg->switch_index[port.index];
  if (i == kNoFgIndex) return;
  ControlMessage msg;
  const uint8_t* f = rte_pktmbuf_mtod(m, const uint8_t*);
  if (parse_control(f + kEthHeaderLen, m->data_len - kEthHeaderLen, &msg) !=
      ControlParseResult::kOk)
    return;
  for (uint32_t e = 0; e < msg.count; ++e) {
    const CreditEntry c = msg.credit(e);
    fg->state->sync_receiver()->on_credit_sent(i, c.dst_ip, c.credit_bytes, now);
  }
}

// FG_DST_PAUSE naming dst, out of host port `host` (the host stops, or
// resumes, sending toward dst only).
void FloodgateModule::send_dst_pause(const FgSwitch& fg, uint32_t host, uint32_t dst, bool pause,
                                     uint64_t now) {
  PortRuntime& port = w_.port(fg.host_ports[host]);
  uint8_t* frame;
  MacAddr mac;
  rte_mbuf* m = w_.new_frame_to_peer(port, &frame, &mac);
  if (m == nullptr) return;
  const DstPauseEntry e{dst, pause};
  build_fg_dst_pause(frame, kEthMinFrameLen, port.mtu, mac, port.mac,
                     w_.shard(port.switch_index), std::span<const DstPauseEntry>(&e, 1));
  FgFrames& c = (*frames_)[port.index];
  c.sent[frame_index(ControlType::kFgDstPause)].add();
  c.control_tx_bytes.add(kEthMinFrameLen);
  w_.send_from(port, m, now);
}

// FG_SYNC out of every switch-facing port: the cumulative bytes sent and
// credit received per destination on it.
void FloodgateModule::send_sync(FgSwitch& fg, uint64_t now) {
  fg.next_sync_ns = now + fg.sync_interval_ns;
  SyncSender& s = *fg.state->sync_sender();
  SyncEntry entries[kMaxListEntries];
  for (uint32_t i = 0; i < fg.switch_ports.size(); ++i) {
    PortRuntime& port = w_.port(fg.switch_ports[i]);
    const uint32_t max =
        std::min(kMaxListEntries, control_entries_per_frame(port.mtu, kFgSyncEntryLen));
    uint32_t cursor = 0;
    while (cursor < s.slots()) {
      const uint32_t n = s.entries(i, &cursor, entries, max);
      if (n == 0) break;
      uint8_t* frame;
      MacAddr dst;
      const uint32_t cap = list_frame_cap(port);
      rte_mbuf* m = w_.new_frame_to_peer(port, &frame, &dst, cap);
      if (m == nullptr) break;  // the next interval repeats the totals
      const ControlListFrame f =
          build_fg_sync(frame, cap, port.mtu, dst, port.mac, w_.shard(port.switch_index),
                        std::span<const SyncEntry>(entries, n));
      rte_pktmbuf_trim(m, static_cast<uint16_t>(cap - f.len));
      FgFrames& c = (*frames_)[port.index];
      c.sent[frame_index(ControlType::kFgSync)].add();
      c.control_tx_bytes.add(f.len);
      w_.send_control(port, now, m);
    }
  }
}

// One switch's: credit due at its ingresses, VOQs to drain after a refund,
// loss recovery's sync.
bool FloodgateModule::timers_of(uint16_t s, uint64_t now) {
  bool busy = false;
  CreditAggregator& a = *credits_[s];
  for (uint32_t i = 0; i < a.ingress_count(); ++i) {
    if (!a.due(i, now)) continue;
    send_credit(s, i, now);
    busy = true;
  }
  FgSwitch& fg = *switch_[s];
  if (fg.owner_slot != w_.slot()) return busy;
  if (drain_due_[s]) {
    drain_due_[s] = 0;
    drain(fg, now);
  }
  if (fg.sync_interval_ns != 0 && now >= fg.next_sync_ns) send_sync(fg, now);
  return busy;
}

// Exact fabric time: when timers_of(sw) next has something to do.
uint64_t FloodgateModule::due_of(uint16_t sw, uint64_t now) {
  const CreditAggregator* a = credits_[sw];
  if (a == nullptr) return UINT64_MAX;
  uint64_t due = UINT64_MAX;
  for (uint32_t i = 0; i < a->ingress_count(); ++i) due = std::min(due, a->next_due_ns(i));
  const FgSwitch& fg = *switch_[sw];
  if (fg.owner_slot == w_.slot()) {
    if (drain_due_[sw]) due = now;
    if (fg.sync_interval_ns != 0) due = std::min(due, fg.next_sync_ns);
  }
  return std::max(due, now);
}

FloodgateModule::FloodgateModule(Worker& w) : w_(w), s_(state(w.rt())) {
  // Sized even without Floodgate: control() and count_credit_sent() look up
  // any switch a control frame comes to (nullptr: not a Floodgate switch).
  const size_t switches = w.rt().switches.size();
  switch_.assign(switches, nullptr);
  if (s_ == nullptr) return;
  frames_ = &s_->frames[w.slot()];
  exact_ = exact_time(w.rt());
  drain_due_.assign(switches, 0);
  element_.assign(switches, UINT32_MAX);
  credits_.assign(switches, nullptr);
  for (uint16_t s = 0; s < switches; ++s) {
    FgSwitch* fg = s_->switches[s].get();
    if (fg == nullptr) continue;
    switch_[s] = fg;
    credits_[s] = fg->credits[w.slot()].get();
    if (credits_[s] != nullptr) switches_.push_back(s);
  }
}

void FloodgateModule::elements(FabricLoop& loop) {
  for (uint16_t s : switches_) element_[s] = loop.add(std::make_unique<FloodgateTimers>(*this, s));
}

void FloodgateModule::touch_element(uint16_t sw) {
  if (element_[sw] != UINT32_MAX) w_.touch_element(element_[sw]);
}

void FloodgateModule::drain_held(Runtime& rt,
                                 const std::function<void(uint16_t, rte_mbuf*)>& f) {
  const FloodgateModuleState* s = state(rt);
  if (s == nullptr) return;
  for (const auto& fg : s->switches) {
    if (fg == nullptr) continue;
    fg->state->discard(
        [&](const VoqPacket& p) { f(p.egress, reinterpret_cast<rte_mbuf*>(p.handle)); });
  }
}

namespace {

// A Floodgate switch's figures for the scraper and the summary: gauges of
// its windows and VOQs, and counters summed over the lcores' aggregators.
// Every field is a relaxed read; any thread may read them.
struct FloodgateSwitchTotals {
  uint64_t windows_in_use = 0;  // below their initial value
  uint64_t window_outstanding_bytes = 0;
  uint64_t voqs_in_use = 0, voq_packets = 0, voq_bytes = 0, peak_voq_bytes = 0;
  uint64_t held_packets = 0, uncontrolled_packets = 0, voq_shared = 0, voq_marks = 0;
  uint64_t invalid_credit_bytes = 0, table_full = 0;
  uint64_t credit_withheld_bytes = 0;
  uint64_t dst_paused = 0, dst_pause_untracked = 0;
  uint64_t sync_healed_data_bytes = 0, sync_healed_credit_bytes = 0, sync_behind = 0;
  uint64_t sync_untracked = 0;
};

FloodgateSwitchTotals switch_totals(const FgSwitch& fg) {
  FloodgateSwitchTotals t;
  const FloodgateSwitch& f = *fg.state;
  const DstWindows& w = f.windows();
  t.windows_in_use = w.in_use();
  t.window_outstanding_bytes = w.outstanding_bytes();
  t.voqs_in_use = f.voqs().in_use();
  t.voq_packets = f.voqs().packets();
  t.voq_bytes = f.voqs().bytes();
  t.peak_voq_bytes = f.peak_voq_bytes.get();
  t.held_packets = f.held_packets.get();
  t.uncontrolled_packets = f.uncontrolled_packets.get();
  t.voq_shared = f.voqs().shared.get();
  t.voq_marks = f.voq_marks.get();
  t.invalid_credit_bytes = w.invalid_credit_bytes.get();
  t.table_full = w.table_full.get();
  for (const auto& a : fg.credits) {
    if (a != nullptr) t.credit_withheld_bytes += a->withheld_bytes.get();
  }
  if (const DstPauseTracker* d = f.dst_pause()) {
    t.dst_paused = d->paused();
    t.dst_pause_untracked = d->untracked.get();
  }
  if (const SyncReceiver* r = f.sync_receiver()) {
    t.sync_healed_data_bytes = r->healed_data_bytes.get();
    t.sync_healed_credit_bytes = r->healed_credit_bytes.get();
    t.sync_behind = r->sync_behind.get();
    t.sync_untracked = r->untracked.get() + f.sync_sender()->untracked.get();
  }
  return t;
}

struct FrameTotals {
  uint64_t sent[3] = {}, received[3] = {};
  uint64_t credit_sent_bytes = 0, credit_received_bytes = 0, credit_lost_bytes = 0;
  uint64_t control_tx_bytes = 0;
};

FrameTotals frame_totals(const FloodgateModuleState& s, uint16_t port) {
  FrameTotals t;
  for (const auto& lcore : s.frames) {
    const FgFrames& f = lcore[port];
    for (unsigned i = 0; i < 3; ++i) {
      t.sent[i] += f.sent[i].get();
      t.received[i] += f.received[i].get();
    }
    t.credit_sent_bytes += f.credit_sent_bytes.get();
    t.credit_received_bytes += f.credit_received_bytes.get();
    t.credit_lost_bytes += f.credit_lost_bytes.get();
    t.control_tx_bytes += f.control_tx_bytes.get();
  }
  return t;
}

}  // namespace

void FloodgateModule::collect(const Runtime& rt, MetricFamilies& out) {
  using prometheus::MetricType;
  const FloodgateModuleState* s = state(rt);
  auto sent =
      metric_family("sluice_floodgate_frames_sent_total",
                    "Floodgate frames sent out of this port (credit to the upstream, sync to "
                    "the downstream, dstPause to a host), by type.",
                    MetricType::Counter);
  auto recv = metric_family("sluice_floodgate_frames_received_total",
                            "Floodgate frames received on this port and applied (credit from the "
                            "downstream, sync from the upstream), by type.",
                            MetricType::Counter);
  auto credit_sent = metric_family(
      "sluice_floodgate_credit_sent_bytes_total",
      "Credit (data bytes) this port's FG_CREDIT frames returned upstream.", MetricType::Counter);
  auto credit_recv = metric_family("sluice_floodgate_credit_received_bytes_total",
                                   "Credit (data bytes) received on this port from its downstream.",
                                   MetricType::Counter);
  auto lost = metric_family(
      "sluice_floodgate_credit_lost_bytes_total",
      "Credit (data bytes) owed this port's upstream that could not be kept (the port's "
      "pending list full of destinations it could not send); only sync heals it.",
      MetricType::Counter);
  auto wire = metric_family("sluice_floodgate_control_bytes_total",
                            "Wire bytes of the Floodgate frames sent out of this port (overhead).",
                            MetricType::Counter);
  for (const auto& p : rt.ports) {
    if (at(*p) == nullptr) continue;
    const FrameTotals t = frame_totals(*s, p->index);
    const MetricLabels l = port_labels(rt, p->index);
    add_frames_by_type(sent, recv, l, kFgFrameTypes, t.sent, t.received);
    add_metric_value(credit_sent, l, double(t.credit_sent_bytes));
    add_metric_value(credit_recv, l, double(t.credit_received_bytes));
    add_metric_value(lost, l, double(t.credit_lost_bytes));
    add_metric_value(wire, l, double(t.control_tx_bytes));
  }
  for (auto* f : {&sent, &recv, &credit_sent, &credit_recv, &lost, &wire})
    out.push_back(std::move(*f));

  struct Row {
    const char* name;
    const char* help;
    MetricType type;
    uint64_t FloodgateSwitchTotals::*field;
  };
  static constexpr Row kRows[] = {
      {"sluice_floodgate_windows_in_use", "Destination windows below their initial value.",
       MetricType::Gauge, &FloodgateSwitchTotals::windows_in_use},
      {"sluice_floodgate_window_outstanding_bytes",
       "Sum over windows of initial minus current: bytes in flight beyond this switch.",
       MetricType::Gauge, &FloodgateSwitchTotals::window_outstanding_bytes},
      {"sluice_floodgate_voqs_in_use", "VOQs mapped by a destination.", MetricType::Gauge,
       &FloodgateSwitchTotals::voqs_in_use},
      {"sluice_floodgate_voq_packets", "Packets waiting in VOQs.", MetricType::Gauge,
       &FloodgateSwitchTotals::voq_packets},
      {"sluice_floodgate_voq_bytes", "Bytes waiting in VOQs (charged to the shared buffer).",
       MetricType::Gauge, &FloodgateSwitchTotals::voq_bytes},
      {"sluice_floodgate_held_packets_total", "Packets that waited in a VOQ.", MetricType::Counter,
       &FloodgateSwitchTotals::held_packets},
      {"sluice_floodgate_uncontrolled_packets_total",
       "Packets sent without a window because the window table was full.", MetricType::Counter,
       &FloodgateSwitchTotals::uncontrolled_packets},
      {"sluice_floodgate_invalid_credit_bytes_total",
       "Credit refused: for a destination without a window, or beyond its initial value.",
       MetricType::Counter, &FloodgateSwitchTotals::invalid_credit_bytes},
      {"sluice_floodgate_credit_withheld_bytes_total",
       "Credit held back by delayCredit (counted each time it was).", MetricType::Counter,
       &FloodgateSwitchTotals::credit_withheld_bytes},
      {"sluice_floodgate_dst_paused", "(host port, destination) pairs paused now.",
       MetricType::Gauge, &FloodgateSwitchTotals::dst_paused},
      {"sluice_floodgate_sync_healed_data_bytes_total",
       "Bytes FG_SYNC showed lost on the way in, credited upstream.", MetricType::Counter,
       &FloodgateSwitchTotals::sync_healed_data_bytes},
      {"sluice_floodgate_sync_healed_credit_bytes_total",
       "Credit FG_SYNC showed lost on the way up, sent again.", MetricType::Counter,
       &FloodgateSwitchTotals::sync_healed_credit_bytes},
  };
  std::vector<prometheus::MetricFamily> fams;
  for (const Row& r : kRows) fams.push_back(metric_family(r.name, r.help, r.type));
  for (const SwitchRuntime& sw : rt.switches) {
    const FgSwitch* fg = of(sw);
    if (fg == nullptr) continue;
    const FloodgateSwitchTotals t = switch_totals(*fg);
    const MetricLabels l = {{"switch", sw.cfg->name}};
    for (size_t i = 0; i < fams.size(); ++i)
      add_metric_value(fams[i], l, double(t.*kRows[i].field));
  }
  for (auto& f : fams) out.push_back(std::move(f));
}

void FloodgateModule::summary_port(const Runtime& rt, uint16_t port, JsonFields& field) {
  if (at(*rt.ports[port]) == nullptr) return;
  const FrameTotals t = frame_totals(*state(rt), port);
  for (unsigned i = 0; i < 3; ++i) {
    field("fg_" + std::string(kFgFrameTypes[i]) + "_sent", t.sent[i]);
    field("fg_" + std::string(kFgFrameTypes[i]) + "_received", t.received[i]);
  }
  field("fg_credit_sent_bytes", t.credit_sent_bytes);
  field("fg_credit_received_bytes", t.credit_received_bytes);
  field("fg_control_tx_bytes", t.control_tx_bytes);
  field("fg_credit_lost_bytes", t.credit_lost_bytes);
  field("fg_control_lost", rt.port_totals(port).control_lost);
}

// A Floodgate switch's windows, VOQs, credit and loss-recovery figures.
void FloodgateModule::summary_switch(const Runtime&, const SwitchRuntime& sw, JsonFields& f) {
  const FgSwitch* fg = of(sw);
  if (fg == nullptr) return;
  const FloodgateSwitchTotals t = switch_totals(*fg);
  JsonObject j;
  j("windows_in_use_at_stop", t.windows_in_use);
  j("window_outstanding_bytes_at_stop", t.window_outstanding_bytes);
  j("voqs_in_use_at_stop", t.voqs_in_use);
  j("voq_packets_at_stop", t.voq_packets);
  j("held_packets", t.held_packets);
  j("voq_peak_bytes", t.peak_voq_bytes);
  j("uncontrolled_packets", t.uncontrolled_packets);
  j("voq_shared", t.voq_shared);
  j("voq_ecn_marks", t.voq_marks);
  j("invalid_credit_bytes", t.invalid_credit_bytes);
  j("window_table_full", t.table_full);
  j("credit_withheld_bytes", t.credit_withheld_bytes);
  j("dst_paused_at_stop", t.dst_paused);
  j("dst_pause_untracked", t.dst_pause_untracked);
  j("sync_healed_data_bytes", t.sync_healed_data_bytes);
  j("sync_healed_credit_bytes", t.sync_healed_credit_bytes);
  j("sync_behind", t.sync_behind);
  j("sync_untracked", t.sync_untracked);
  f.raw("floodgate", j.str());
}

void FloodgateModule::telemetry_port(const Runtime& rt, const PortRuntime& p, rte_tel_data* d) {
  if (at(p) == nullptr) return;
  const FrameTotals t = frame_totals(*state(rt), p.index);
  for (unsigned i = 0; i < 3; ++i) {
    rte_tel_data_add_dict_u64(d, ("fg_" + std::string(kFgFrameTypes[i]) + "_sent").c_str(),
                              t.sent[i]);
    rte_tel_data_add_dict_u64(d, ("fg_" + std::string(kFgFrameTypes[i]) + "_received").c_str(),
                              t.received[i]);
  }
  rte_tel_data_add_dict_u64(d, "fg_credit_sent_bytes", t.credit_sent_bytes);
  rte_tel_data_add_dict_u64(d, "fg_credit_received_bytes", t.credit_received_bytes);
  rte_tel_data_add_dict_u64(d, "fg_credit_lost_bytes", t.credit_lost_bytes);
}

}  // namespace sluice
