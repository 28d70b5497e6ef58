// The Floodgate parts of a worker's loop (SPEC 3, SPEC 4.1): the window /
// VOQ step of admission, credit and counts at departure, the frames it
// receives (credit, sync) and sends (credit, dstPause, sync), and its
// timers. The rules are lib/mechanisms/floodgate; this file moves packets and frames.
// docs/mechanisms/floodgate.md ("In the data path").
//
// One writer: a switch's FloodgateSwitch (windows, VOQs, dstPause, sync) is
// touched only on the lcore that owns its switch-facing ports, which is
// where packets toward them are admitted and depart and where credit and
// sync frames arrive. Credit is earned wherever a packet departs; each lcore
// aggregates its own and sends the frame out of the ingress port, through
// that port's owner when it is another lcore.

#include <algorithm>
#include <span>

#include "lib/net/ethertypes.h"
#include "lib/net/ipv4_rewrite.h"
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

bool is_fg_credit_frame(const rte_mbuf* m) {
  const uint8_t* f = rte_pktmbuf_mtod(m, const uint8_t*);
  return m->data_len > kEthHeaderLen + 3 && load_be16(f + 12) == kEtherTypeSluiceControl &&
         f[kEthHeaderLen + 3] == static_cast<uint8_t>(ControlType::kFgCredit);
}

}  // namespace

// Admission step 1. True: the packet goes on to queue choice (its window
// was debited, or it has none); false: it waits in a VOQ or was dropped.
bool Worker::fg_window(PortRuntime& out, rte_mbuf* m, const MbufMeta& meta, uint64_t now) {
  FloodgateRuntime& fg = *rt_.switches[out.switch_index].fg;
  MbufExtra* x = mbuf_extra(m);
  FgPacket p;
  p.handle = reinterpret_cast<uint64_t>(m);
  p.dst = x->fg.dst;
  p.bytes = x->fg.bytes;
  p.egress = out.index;
  p.initial = out.fg_initial_window;
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
      drop_data(out, m, a.reason, false, now);
      return false;
    case FgVerdict::kHeldMarked:
      mark_ce(counters(out.index), rte_pktmbuf_mtod(m, uint8_t*) + meta.l3_offset);
      [[fallthrough]];
    case FgVerdict::kHeld:
      break;
  }
  // Held bytes count against their ingress for PFC like queued ones.
  const uint16_t pfc_in = pfc_ingress_of(out, m);
  if (pfc_in != kNoIngress) count_pfc_ingress(out, m, pfc_in, meta.queue, m->pkt_len);
  return false;
}

// Packets whose windows allow leave the VOQs for their egress queues.
void Worker::fg_drain(FloodgateRuntime& fg, uint64_t now) {
  fg.state->drain(kVoqDrainBudget, [&](const VoqPacket& p) {
    auto* m = reinterpret_cast<rte_mbuf*>(p.handle);
    PortRuntime& out = *ports_[p.egress];
    const uint16_t pfc_in = pfc_ingress_of(out, m);
    if (pfc_in != kNoIngress) {
      w_.pfc_bytes[pfc_in].on_dequeue(mbuf_extra(m)->pfc_priority, m->pkt_len);
      touch_misc(pfc_in);  // counted again if admitted; an XON may be owed if not
    }
    admit_released(out, m, now);
  });
}

// Forward, for a Floodgate switch: what the window, credit and sync steps
// need, and the bytes received on a switch-facing port for loss recovery.
void Worker::fg_ingress(const SwitchRuntime& sw, const PortRuntime& in, rte_mbuf* m,
                        const ParsedPacket& pp, MbufExtra* x, uint64_t now) {
  x->fg.dst = pp.dst_ip;
  x->fg.bytes = fg_frame_bytes(rte_pktmbuf_pkt_len(m), pp.l3_offset);
  const uint32_t i = sw.fg->switch_index[in.index];
  if (i == kNoFgIndex) return;
  if (SyncReceiver* r = sw.fg->state->sync_receiver())
    r->on_received(i, x->fg.dst, x->fg.bytes, now);
}

// Departure: credit owed upstream for a packet from a switch-facing port;
// toward a switch-facing port, the sync and dstPause counts.
void Worker::fg_departure(PortRuntime& port, const TmPacket& p, uint64_t now) {
  FloodgateRuntime& fg = *rt_.switches[port.switch_index].fg;
  const MbufExtra* x = mbuf_extra(static_cast<rte_mbuf*>(p.handle));
  const uint32_t in = fg.switch_index[x->ingress];
  // The aggregator takes the credit unless the ingress's list is full; then
  // the frame goes first (out of line: rare).
  if (in != kNoFgIndex) {
    if (!w_.fg_credits[port.switch_index]->add(in, x->fg.dst, x->fg.bytes)) [[unlikely]]
      fg_earn_credit(port.switch_index, in, x->fg.dst, x->fg.bytes, now);
    fg_touch(port.switch_index);  // exact time: its credit falls due
  }
  if (!port.plan.fg_window) return;
  if (SyncSender* s = fg.state->sync_sender())
    s->on_sent(fg.switch_index[port.index], x->fg.dst, x->fg.bytes);
  fg_left(fg, *x, now);
}

// A packet admission counted for dstPause left the switch: its host may be
// told to resume.
void Worker::fg_left(FloodgateRuntime& fg, const MbufExtra& x, uint64_t now) {
  const uint32_t host = fg.host_index[x.ingress];
  const DstPauseSignal sig = fg.state->left(host, x.fg.dst, x.fg.bytes);
  if (sig != DstPauseSignal::kNone)
    send_dst_pause(fg, host, x.fg.dst, sig == DstPauseSignal::kPause, now);
}

// A data packet dropped in the switch still owes its upstream the credit
// (else the upstream's window shrinks for good); one whose window was
// debited here gets it back, and leaves the dstPause count.
void Worker::fg_dropped(PortRuntime& out, rte_mbuf* m, bool debited, uint64_t now) {
  FloodgateRuntime& fg = *rt_.switches[out.switch_index].fg;
  const MbufExtra* x = mbuf_extra(m);
  const uint32_t in = fg.switch_index[x->ingress];
  if (in != kNoFgIndex) fg_earn_credit(out.switch_index, in, x->fg.dst, x->fg.bytes, now);
  if (!debited) return;
  fg.state->refund(x->fg.dst, x->fg.bytes);
  fg_drain_due_[out.switch_index] = 1;
  fg_touch(out.switch_index);
  fg_left(fg, *x, now);
}

// Ingress control: credit and sync from the downstream of a switch-facing
// port. A switch never obeys dstPause (only hosts do).
void Worker::handle_fg_control(PortRuntime& in, rte_mbuf* m, const ControlMessage& msg,
                               uint64_t now) {
  FloodgateRuntime* fg = rt_.switches[in.switch_index].fg.get();
  const uint32_t i = fg != nullptr ? fg->switch_index[in.index] : kNoFgIndex;
  const bool usable = i != kNoFgIndex &&
                      (msg.type == ControlType::kFgCredit ||
                       (msg.type == ControlType::kFgSync && fg->state->sync_receiver() != nullptr));
  if (!usable) return drop(in.index, m, DropReason::kControlUnsupported);
  PortCounters& c = counters(in.index);
  c.fg_received[fg_frame_index(msg.type)].add();
  if (msg.type == ControlType::kFgCredit) {
    fg_take_credit(*fg, i, msg);
    fg_drain(*fg, now);
  } else {
    fg_take_sync(*fg, in.switch_index, i, msg, now);
  }
  c.rx_consumed_packets.add();
  rte_pktmbuf_free(m);
}

void Worker::fg_take_credit(FloodgateRuntime& fg, uint32_t ingress, const ControlMessage& msg) {
  uint64_t bytes = 0;
  for (uint32_t e = 0; e < msg.count; ++e) {
    const CreditEntry c = msg.credit(e);
    fg.state->credit(ingress, c.dst_ip, c.credit_bytes);
    bytes += c.credit_bytes;
  }
  counters(fg.switch_ports[ingress]).fg_credit_received_bytes.add(bytes);
}

// What the sync shows lost (data that never arrived, credit the upstream
// never got) is owed to the upstream as credit again.
void Worker::fg_take_sync(FloodgateRuntime& fg, uint16_t sw, uint32_t ingress,
                          const ControlMessage& msg, uint64_t now) {
  SyncReceiver& r = *fg.state->sync_receiver();
  for (uint32_t e = 0; e < msg.count; ++e) {
    const SyncEntry s = msg.sync(e);
    const SyncHeal h = r.on_sync(ingress, s, now);
    const uint64_t owed = h.lost_data_bytes + h.lost_credit_bytes;
    if (owed != 0) fg_earn_credit(sw, ingress, s.dst_ip, owed, now);
  }
}

void Worker::fg_earn_credit(uint16_t sw, uint32_t ingress, uint32_t dst, uint64_t bytes,
                            uint64_t now) {
  CreditAggregator& a = *w_.fg_credits[sw];
  while (bytes != 0) {
    const auto part = static_cast<uint32_t>(std::min<uint64_t>(bytes, UINT32_MAX));
    if (!a.add(ingress, dst, part)) {
      // The ingress's list is full: its frame goes first. Were every entry
      // left in it (all withheld, or no frame could be built), this credit
      // is lost, counted; only sync heals it (docs/mechanisms/floodgate.md,
      // "In the data path").
      send_fg_credit(sw, ingress, now);
      if (!a.add(ingress, dst, part)) {
        counters(rt_.switches[sw].fg->switch_ports[ingress]).fg_credit_lost_bytes.add(bytes);
        return;
      }
    }
    bytes -= part;
  }
  fg_touch(sw);
}

// An FG_CREDIT frame of entries[0..n) for the port's peer, or nullptr (no
// mbuf, peer MAC unknown; counted in control_lost).
rte_mbuf* Worker::credit_frame(PortRuntime& port, const CreditEntry* entries, uint32_t n) {
  uint8_t* frame;
  MacAddr dst;
  const uint32_t cap = list_frame_cap(port);
  rte_mbuf* m = new_frame_to_peer(port, &frame, &dst, cap);
  if (m == nullptr) return nullptr;
  const ControlListFrame f =
      build_fg_credit(frame, cap, port.mtu, dst, port.mac, static_cast<uint8_t>(w_.slot),
                      std::span<const CreditEntry>(entries, n));
  rte_pktmbuf_trim(m, static_cast<uint16_t>(cap - f.len));
  return m;
}

// One or more FG_CREDIT frames out of switch-facing ingress `ingress`,
// holding back (delayCredit) what the owner's VOQs say to.
void Worker::send_fg_credit(uint16_t sw, uint32_t ingress, uint64_t now) {
  FloodgateRuntime& fg = *rt_.switches[sw].fg;
  CreditAggregator& a = *w_.fg_credits[sw];
  PortRuntime& port = *ports_[fg.switch_ports[ingress]];
  // The ingress is switch-facing, so its owner is the windows' owner.
  const bool owner = port.owner_slot == w_.slot;
  const auto withhold = [&](uint32_t dst) { return owner && fg.state->withhold(dst); };
  const uint32_t max =
      std::min(kMaxListEntries, control_entries_per_frame(port.mtu, kFgCreditEntryLen));
  CreditEntry entries[kMaxListEntries];
  uint32_t n;
  do {
    n = a.take(ingress, now, entries, max, withhold);
    if (n == 0) return;
    rte_mbuf* m = credit_frame(port, entries, n);
    // Queued here, the frame is the port's; toward another lcore's port it
    // is handed over (a full ring or control queue there loses it, counted,
    // and only FG_SYNC heals that). Otherwise the credit is kept for the
    // next try: it is never lost in this switch.
    if (m == nullptr || (owner && !send_control(port, now, m))) {
      for (uint32_t e = 0; e < n; ++e) a.add(ingress, entries[e].dst_ip, entries[e].credit_bytes);
      a.retry_at(ingress, now + EventCalendar::kRetryNs);
      return;
    }
    const uint32_t frame_len = m->pkt_len;  // before another lcore may send it
    if (owner)
      fg_count_credit_sent(port, m, now);
    else
      send_from(port, m, now);
    PortCounters& c = counters(port.index);
    c.fg_sent[fg_frame_index(ControlType::kFgCredit)].add();
    c.fg_control_tx_bytes.add(frame_len);
    for (uint32_t e = 0; e < n; ++e) c.fg_credit_sent_bytes.add(entries[e].credit_bytes);
  } while (n == max);
}

// Loss recovery counts the credit that leaves a switch-facing port, on the
// port's owner: credit built on another lcore is counted as it passes.
void Worker::fg_count_credit_sent(PortRuntime& port, const rte_mbuf* m, uint64_t now) {
  const FloodgateRuntime* fg = rt_.switches[port.switch_index].fg.get();
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
void Worker::send_dst_pause(const FloodgateRuntime& fg, uint32_t host, uint32_t dst, bool pause,
                            uint64_t now) {
  PortRuntime& port = *ports_[fg.host_ports[host]];
  uint8_t* frame;
  MacAddr mac;
  rte_mbuf* m = new_frame_to_peer(port, &frame, &mac);
  if (m == nullptr) return;
  const DstPauseEntry e{dst, pause};
  build_fg_dst_pause(frame, kEthMinFrameLen, port.mtu, mac, port.mac, static_cast<uint8_t>(w_.slot),
                     std::span<const DstPauseEntry>(&e, 1));
  PortCounters& c = counters(port.index);
  c.fg_sent[fg_frame_index(ControlType::kFgDstPause)].add();
  c.fg_control_tx_bytes.add(kEthMinFrameLen);
  send_from(port, m, now);
}

// FG_SYNC out of every switch-facing port: the cumulative bytes sent and
// credit received per destination on it.
void Worker::send_fg_sync(FloodgateRuntime& fg, uint64_t now) {
  fg.next_sync_ns = now + fg.sync_interval_ns;
  SyncSender& s = *fg.state->sync_sender();
  SyncEntry entries[kMaxListEntries];
  for (uint32_t i = 0; i < fg.switch_ports.size(); ++i) {
    PortRuntime& port = *ports_[fg.switch_ports[i]];
    const uint32_t max =
        std::min(kMaxListEntries, control_entries_per_frame(port.mtu, kFgSyncEntryLen));
    uint32_t cursor = 0;
    while (cursor < s.slots()) {
      const uint32_t n = s.entries(i, &cursor, entries, max);
      if (n == 0) break;
      uint8_t* frame;
      MacAddr dst;
      const uint32_t cap = list_frame_cap(port);
      rte_mbuf* m = new_frame_to_peer(port, &frame, &dst, cap);
      if (m == nullptr) break;  // the next interval repeats the totals
      const ControlListFrame f =
          build_fg_sync(frame, cap, port.mtu, dst, port.mac, static_cast<uint8_t>(w_.slot),
                        std::span<const SyncEntry>(entries, n));
      rte_pktmbuf_trim(m, static_cast<uint16_t>(cap - f.len));
      PortCounters& c = counters(port.index);
      c.fg_sent[fg_frame_index(ControlType::kFgSync)].add();
      c.fg_control_tx_bytes.add(f.len);
      send_control(port, now, m);
    }
  }
}

// Per loop: credit frames that are due, and on the owner the VOQs a refund
// opened and the sync interval.
bool Worker::fg_timers(uint64_t now) {
  bool busy = false;
  for (uint16_t s : fg_switches_) busy |= fg_timers_of(s, now);
  return busy;
}

// One switch's: credit due at its ingresses, VOQs to drain after a refund,
// loss recovery's sync.
bool Worker::fg_timers_of(uint16_t s, uint64_t now) {
  bool busy = false;
  CreditAggregator& a = *w_.fg_credits[s];
  for (uint32_t i = 0; i < a.ingress_count(); ++i) {
    if (!a.due(i, now)) continue;
    send_fg_credit(s, i, now);
    busy = true;
  }
  FloodgateRuntime& fg = *rt_.switches[s].fg;
  if (fg.owner_slot != w_.slot) return busy;
  if (fg_drain_due_[s]) {
    fg_drain_due_[s] = 0;
    fg_drain(fg, now);
  }
  if (fg.sync_interval_ns != 0 && now >= fg.next_sync_ns) send_fg_sync(fg, now);
  return busy;
}

// Exact fabric time: when fg_timers_of(sw) next has something to do.
uint64_t Worker::fg_due(uint16_t sw, uint64_t now) {
  const CreditAggregator* a = w_.fg_credits[sw].get();
  if (a == nullptr) return UINT64_MAX;
  uint64_t due = UINT64_MAX;
  for (uint32_t i = 0; i < a->ingress_count(); ++i) due = std::min(due, a->next_due_ns(i));
  const FloodgateRuntime& fg = *rt_.switches[sw].fg;
  if (fg.owner_slot == w_.slot) {
    if (fg_drain_due_[sw]) due = now;
    if (fg.sync_interval_ns != 0) due = std::min(due, fg.next_sync_ns);
  }
  return std::max(due, now);
}

}  // namespace sluice
