#include "switch/mechanisms/pfc/pfc_module.h"

#include <algorithm>
#include <exception>

#include "lib/mechanisms/pfc/pause_frame.h"
#include "lib/mechanisms/pfc/pfc_classes.h"
#include "switch/path/worker.h"

namespace sluice {
namespace {

PfcMode pfc_mode(PfcGenerationMode m) {
  switch (m) {
    case PfcGenerationMode::kPfc:
      return PfcMode::kPfc;
    case PfcGenerationMode::kPause:
      return PfcMode::kPause;
    case PfcGenerationMode::kOff:
      break;
  }
  return PfcMode::kOff;
}

PfcModuleState* state(const Runtime& rt) {
  return static_cast<PfcModuleState*>(rt.module_state[PfcModule::kId].get());
}

}  // namespace

// PFC state of every port that takes part (switch mode on, port not opted
// out).
std::string PfcModule::build(Runtime& rt) {
  auto s = std::make_unique<PfcModuleState>();
  s->ports.resize(rt.ports.size());
  s->set_aside.assign(rt.switches.size(), 0);
  bool any = false;
  for (auto& p : rt.ports) {
    const SwitchConfig& sc = *rt.switches[p->switch_index].cfg;
    if (sc.pfc.mode == PfcGenerationMode::kOff) continue;
    rt.switches[p->switch_index].ingress_meta = true;
    if (!p->cfg->pfc.enabled) continue;
    // On a BFC switch, BFC owns the switch-facing ports' queue pauses; PFC
    // only holds back hosts (which BFC cannot pause).
    if (sc.bfc.enabled && p->cfg->role == PortRole::kSwitch) continue;
    // An unshaped port still needs a rate to turn quanta into time: assume 100G.
    const uint64_t rate = p->cfg->rate_bps != 0 ? p->cfg->rate_bps : 100'000'000'000ull;
    const PfcConfig pc = port_pfc(sc.pfc, p->cfg->pfc);
    PfcIngressConfig ic;
    ic.mode = pfc_mode(pc.mode);
    ic.priorities = pc.priorities;
    ic.xoff_bytes = pc.xoff_bytes;
    ic.dynamic_alpha = pc.dynamic ? pc.alpha : 0.0;
    ic.hysteresis_bytes =
        pc.hysteresis_bytes != 0 ? pc.hysteresis_bytes : default_pfc_hysteresis_bytes(p->cfg->mtu);
    ic.xoff_quanta = pc.quanta;
    ic.rate_bps = rate;
    ic.reserve_bytes = pc.reserve_bytes;
    ic.headroom_bytes = pc.headroom_bytes;
    PfcReactionConfig rc;
    rc.mode = ic.mode;
    rc.priorities = sc.pfc.priorities;
    rc.rate_bps = rate;
    rc.class_queues = default_class_queues(sc.tm.queues_per_port);
    auto port = std::make_unique<PfcPort>();
    port->pooled = pc.reserve_bytes != 0 || pc.headroom_bytes != 0;
    s->set_aside[p->switch_index] += pc.reserve_bytes + pc.headroom_bytes;
    try {
      port->ingress = std::make_unique<PfcIngress>(ic);
      port->reaction = std::make_unique<PfcReaction>(rc);
    } catch (const std::exception& e) {
      return sc.name + "/" + p->cfg->name + ": PFC: " + e.what();
    }
    p->module[kId] = port.get();
    s->ports[p->index] = std::move(port);
    any = true;
  }
  if (!any) return "";
  s->bytes.resize(rt.workers.size());
  for (auto& shard : s->bytes) shard = std::vector<PfcIngressBytes>(rt.ports.size());
  s->pool.resize(rt.workers.size());
  for (auto& shard : s->pool) shard = std::vector<PfcPoolUse>(rt.switches.size());
  rt.module_state[kId] = std::move(s);
  return "";
}

PfcModule::PfcModule(Worker& w) : w_(w), s_(state(w.rt())) {
  if (s_ == nullptr) return;
  bytes_ = &s_->bytes[w.slot()];
  pool_ = &s_->pool[w.slot()];
  const Runtime& rt = w.rt();
  dynamic_.resize(rt.switches.size());
  for (uint16_t p : w.lcore().ports) {
    const PortRuntime& port = *rt.ports[p];
    if (at(port) != nullptr && at(port)->ingress->config().dynamic_alpha > 0)
      dynamic_[port.switch_index].push_back(p);
  }
  for (const auto& ports : dynamic_) any_dynamic_ |= !ports.empty();
}

void PfcModule::before_enqueue(PortRuntime& out, rte_mbuf* m, TmPacket& tp) {
  // A reply in its own queue is outside PFC's classes: not counted.
  if (out.reply_queue != kNoReplyQueue && mbuf_meta_get(m).queue == out.reply_queue) return;
  const uint16_t in = mbuf_extra(m)->ingress;
  if (at(w_.port(in)) != nullptr) tp.aux = static_cast<uint16_t>(in + 1);
}

void PfcModule::account(PortRuntime& out, rte_mbuf* m, const MbufMeta& meta, const TmPacket& tp,
                        uint64_t) {
  if (tp.aux != 0) count(out, m, static_cast<uint16_t>(tp.aux - 1), meta.queue, tp.bytes);
}

// The class queues: the reply queue, if any, is not one.
static uint32_t data_queues(const PortRuntime& out) {
  return out.tm->num_queues() - (out.reply_queue != kNoReplyQueue ? 1 : 0);
}

// PFC counts a packet's bytes at its ingress under the priority of its own
// class (the queue the class map gave it), remembered for the dequeue: BFC
// moves packets to other queues, whose priorities say nothing about them.
void PfcModule::count(PortRuntime& out, rte_mbuf* m, uint16_t ingress, uint16_t class_queue,
                      uint32_t bytes) {
  const uint8_t prio = priority_of_queue(class_queue, data_queues(out));
  mbuf_extra(m)->pfc_priority = prio;
  const PfcPort& in = *at(w_.port(ingress));
  if (in.pooled) {
    const uint16_t sw = out.switch_index;
    (*bytes_)[ingress].on_enqueue(prio, bytes, in.ingress->config().reserve_bytes,
                                  in.ingress->headroom_threshold(free_pool(sw)), (*pool_)[sw]);
  } else {
    (*bytes_)[ingress].on_enqueue(prio, bytes);
  }
  w_.touch_misc(ingress);  // its XOFF may be due
}

// Counted out under the rule it was counted in with.
void PfcModule::uncount(uint16_t ingress, uint16_t sw, uint8_t prio, uint32_t bytes) {
  const PfcPort& in = *at(w_.port(ingress));
  if (in.pooled)
    (*bytes_)[ingress].on_dequeue(prio, bytes, in.ingress->config().reserve_bytes, (*pool_)[sw]);
  else
    (*bytes_)[ingress].on_dequeue(prio, bytes);
  w_.touch_misc(ingress);
}

void PfcModule::hold(PortRuntime& out, rte_mbuf* m, const MbufMeta& meta) {
  const uint16_t in = mbuf_extra(m)->ingress;
  if (at(w_.port(in)) != nullptr) count(out, m, in, meta.queue, m->pkt_len);
}

// Counted again if admitted; an XON may be owed if not.
void PfcModule::unhold(PortRuntime& out, rte_mbuf* m) {
  const uint16_t in = mbuf_extra(m)->ingress;
  if (at(w_.port(in)) == nullptr) return;
  uncount(in, out.switch_index, mbuf_extra(m)->pfc_priority, m->pkt_len);
}

// Its XON may be due.
void PfcModule::release(PortRuntime& port, const TmPacket& p, uint64_t) {
  if (p.aux == 0) return;
  rte_mbuf* m = static_cast<rte_mbuf*>(p.handle);
  uncount(static_cast<uint16_t>(p.aux - 1), port.switch_index, mbuf_extra(m)->pfc_priority,
          p.bytes);
}

bool PfcModule::mac_control(PortRuntime& in, rte_mbuf* m, const ParsedPacket& pp, uint64_t now) {
  PfcPort* pfc = at(in);
  const uint8_t* frame = rte_pktmbuf_mtod(m, const uint8_t*);
  if (pfc == nullptr || !mac_control_dst_ok(frame, in.mac)) return false;
  pfc->reaction->receive(frame + pp.l3_offset, m->data_len - pp.l3_offset, now, in.tm.get());
  w_.touch(in.index);  // the port's own wire: paused or resumed
  w_.counters(in.index).rx_consumed_packets.add();
  rte_pktmbuf_free(m);
  return true;
}

// The XOFF / XON / refresh a port owes its peer now, if any, from the bytes
// that arrived on it and still wait in this switch (summed over the lcores'
// shards).
bool PfcModule::decision(const PortRuntime& port, uint64_t now, PfcDecision* d) const {
  const PfcPort& pfc = *at(port);
  std::array<uint64_t, kPfcClasses> bytes{}, headroom{};
  for (const auto& shard : s_->bytes) {
    const PfcIngressBytes& b = shard[port.index];
    for (uint32_t c = 0; c < kPfcClasses; ++c) bytes[c] += b.bytes(static_cast<uint8_t>(c));
    // Only a port counted under the pooled rule has headroom bytes.
    if (pfc.pooled)
      for (uint32_t c = 0; c < kPfcClasses; ++c) headroom[c] += b.headroom(static_cast<uint8_t>(c));
  }
  return pfc.ingress->poll(now, bytes, headroom, free_pool(port.switch_index), d);
}

// The free pool of switch sw as this lcore sees it: its share of the
// buffer, less what the ports set aside and the shared bytes in use.
uint64_t PfcModule::free_pool(uint16_t sw) const {
  const SharedBuffer* buf = w_.lcore().buffers[sw].get();
  uint64_t reserved = 0, headroom = 0;
  if (s_->set_aside[sw] != 0) {
    for (const auto& shard : s_->pool) {
      reserved += shard[sw].reserved.get();
      headroom += shard[sw].headroom.get();
    }
  }
  return pfc_pool_free(buf->capacity(), s_->set_aside[sw], buf->used(), reserved, headroom);
}

void PfcModule::generate(PortRuntime& port, uint64_t now) {
  PfcPort& pfc = *at(port);
  PfcDecision d;
  if (!decision(port, now, &d)) return;
  // Not sent: asked again next iteration (real time), or a retry later
  // (exact time, where asking again at the same instant would never end).
  pfc.retry_ns = now + EventCalendar::kRetryNs;
  uint8_t* frame;
  rte_mbuf* m = w_.new_frame(kMacControlFrameLen, &frame);
  if (m == nullptr) return;
  if (build_decision_frame(d, frame, kMacControlFrameLen, port.mac) == 0) {
    rte_pktmbuf_free(m);
    return;
  }
  // Committed only once queued: a full control queue means it is asked again.
  if (w_.send_control(port, now, m)) {
    pfc.ingress->on_sent(d, now);
    pfc.retry_ns = 0;
  }
}

void PfcModule::slow_timers(PortRuntime& port, uint64_t now) {
  if (PfcPort* pfc = at(port)) pfc->reaction->settle(now);
}

void PfcModule::finish_port(PortRuntime& port, uint64_t end_ns) {
  if (PfcPort* pfc = at(port)) pfc->reaction->settle(end_ns);
}

// Bytes counted against this ingress, or freed, may owe the peer an XOFF
// or XON now (a touch_misc() asks).
uint64_t PfcModule::port_timers_due(const PortRuntime& port, uint64_t now) const {
  const PfcPort* pfc = at(port);
  if (pfc == nullptr) return EventCalendar::kNever;
  PfcDecision d;
  return decision(port, now, &d) ? std::max(now, pfc->retry_ns) : pfc->ingress->next_refresh_ns();
}

void PfcModule::port_timers(PortRuntime& port, uint64_t now) {
  if (at(port) != nullptr) generate(port, now);
}

void PfcModule::touch_dynamic(uint16_t sw) {
  if (sw >= dynamic_.size()) return;
  for (uint16_t p : dynamic_[sw]) w_.touch_misc(p);
}

void PfcModule::collect(const Runtime& rt, MetricFamilies& out) {
  using prometheus::MetricType;
  auto sent =
      metric_family("sluice_pfc_frames_sent_total",
                    "PFC/PAUSE frames sent that carried this priority (XOFF, XON or refresh).",
                    MetricType::Counter);
  auto xoff = metric_family("sluice_pfc_xoff_total", "XON to XOFF transitions toward the peer.",
                            MetricType::Counter);
  auto recv =
      metric_family("sluice_pfc_frames_received_total",
                    "PFC/PAUSE frames received that acted on this priority.", MetricType::Counter);
  auto paused =
      metric_family("sluice_pfc_paused_seconds_total",
                    "Time this port was paused by its peer, per priority.", MetricType::Counter);
  auto bad = metric_family("sluice_pfc_invalid_frames_total",
                           "MAC control frames with a short body or an unknown opcode.",
                           MetricType::Counter);
  for (const auto& p : rt.ports) {
    const PfcPort* pfc = at(*p);
    if (pfc == nullptr) continue;
    const PfcTxStats& tx = pfc->ingress->stats();
    const PfcRxStats& rx = pfc->reaction->stats();
    for (uint32_t slot = 0; slot < kPfcSlots; ++slot) {
      MetricLabels l = port_labels(rt, p->index);
      l.push_back({"priority", slot == kAllPriorities ? "all" : std::to_string(slot)});
      add_metric_value(sent, l, double(tx.sent[slot].get()));
      add_metric_value(xoff, l, double(tx.xoff[slot].get()));
      add_metric_value(recv, l, double(rx.received[slot].get()));
      add_metric_value(paused, l, rx.paused_ns[slot].get() * 1e-9);
    }
    add_metric_value(bad, port_labels(rt, p->index), double(rx.invalid.get()));
  }
  for (auto* f : {&sent, &xoff, &recv, &paused, &bad}) out.push_back(std::move(*f));
}

void PfcModule::summary_port(const Runtime& rt, uint16_t port, JsonFields& f) {
  const PfcPort* pfc = at(*rt.ports[port]);
  if (pfc == nullptr) return;
  f("pfc_frames_sent", pfc->ingress->stats().frames_sent.get());
  f("pfc_frames_received", pfc->reaction->stats().frames_received.get());
  uint64_t paused = 0;
  for (uint32_t slot = 0; slot < kPfcSlots; ++slot)
    paused += pfc->reaction->stats().paused_ns[slot].get();
  f("pfc_paused_ns", paused);
}

}  // namespace sluice
