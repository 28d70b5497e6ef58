#include "switch/mechanisms/bfc/bfc_module.h"

#include <algorithm>
#include <bit>
#include <memory>
#include <vector>

#include "lib/common/seeds.h"
#include "lib/mechanisms/bfc/hop_rtt.h"
#include "lib/net/ethertypes.h"
#include "switch/emulator/fabric_loop.h"
#include "switch/path/worker.h"

namespace sluice {
namespace {

BfcModuleState* state(const Runtime& rt) {
  return static_cast<BfcModuleState*>(rt.module_state[BfcModule::kId].get());
}

unsigned frame_index(ControlType t) { return static_cast<unsigned>(t) - 3; }

BfcAssignment assignment(BfcAssignmentKind k) {
  switch (k) {
    case BfcAssignmentKind::kStochastic:
      return BfcAssignment::kStochastic;
    case BfcAssignmentKind::kSingle:
      return BfcAssignment::kSingle;
    case BfcAssignmentKind::kDynamic:
      break;
  }
  return BfcAssignment::kDynamic;
}

// A replaying host whose NIC is a BFC NIC (it names its queue in the shim,
// paper 3.3.2).
bool bfc_nic(const PortConfig& pc) { return pc.pcap && pc.nic.mode == NicMode::kBfc; }

// Ports whose peer BFC pauses per queue: a switch, or a BFC NIC. Their
// ingress counts pauses, they get bitmaps, and their hop RTT sizes HRTT.
bool pausable_peer(const PortConfig& pc) { return pc.role == PortRole::kSwitch || bfc_nic(pc); }

// The queues of the port's upstream: a switch port's most, or a BFC NIC's.
uint16_t upstream_queues(const PortConfig& pc) {
  return static_cast<uint16_t>(bfc_nic(pc) ? bfc_nic_upstream_queues(pc.nic.queues)
                                           : kMaxUpstreamQueues);
}

// BFC's HRTT: the largest hop_rtt of the switch's switch-facing ports (all
// ports when it has none). lib/mechanisms/bfc/hop_rtt.h.
uint64_t switch_hop_rtt_ns(const Runtime& rt, const SwitchRuntime& sw) {
  std::vector<uint64_t> rtts;
  std::unique_ptr<bool[]> facing = std::make_unique<bool[]>(sw.ports.size());
  for (uint16_t g : sw.ports) {
    facing[rtts.size()] = pausable_peer(*rt.ports[g]->cfg);
    rtts.push_back(rt.ports[g]->cfg->hop_rtt_ns);
  }
  return upstream_hop_rtt_ns(rtts, std::span<const bool>(facing.get(), rtts.size()));
}

// Per-port tables every shard of the switch shares the shape of.
struct SwitchTables {
  std::unique_ptr<bool[]> facing;  // switch-facing ports of this switch
  std::vector<uint64_t> rates;
  std::vector<uint16_t> upstream_queues;
};

SwitchTables tables_of(const Runtime& rt, const SwitchRuntime& sw) {
  SwitchTables t{std::make_unique<bool[]>(rt.ports.size()),
                 std::vector<uint64_t>(rt.ports.size(), 0),
                 std::vector<uint16_t>(rt.ports.size(), 1)};
  for (uint16_t g : sw.ports) {
    t.facing[g] = pausable_peer(*rt.ports[g]->cfg);
    t.rates[g] = rt.ports[g]->cfg->rate_bps;
    if (t.facing[g]) t.upstream_queues[g] = upstream_queues(*rt.ports[g]->cfg);
  }
  return t;
}

std::string create_shard(Runtime& rt, const SwitchRuntime& sw, BfcSwitch& b, WorkerRuntime& w,
                         const SwitchTables& t) {
  const BfcConfig& bc = sw.cfg->bfc;
  const uint32_t queues = sw.cfg->tm.queues_per_port;
  // The egress ports this lcore owns: one flow-table slice each.
  std::unique_ptr<bool[]> owned = std::make_unique<bool[]>(rt.ports.size());
  bool any = false;
  for (uint16_t g : sw.ports) {
    owned[g] = rt.ports[g]->owner_slot == w.slot;
    any = any || owned[g];
  }
  if (!any) return "";
  const std::span<const bool> facing(t.facing.get(), rt.ports.size());
  const uint64_t hop_rtt = b.hop_rtt_ns;
  BfcShardConfig c;
  c.mode = assignment(bc.assignment);
  c.switch_facing = facing;
  c.upstream_queues = t.upstream_queues;
  c.rate_bps = t.rates;
  c.egress_ports = std::span<const bool>(owned.get(), rt.ports.size());
  c.queues_per_port = queues;
  c.flow_table_factor = bc.flow_table_factor;
  c.hop_rtt_ns = hop_rtt;
  c.sticky_ns = bfc_sticky_ns(bc.sticky_ns, hop_rtt);
  c.th_ns = bfc_th_time_ns(bc.th_ns, hop_rtt);
  c.rng_seed = derive_seed(rt.config.seed, SeedStream::kBfc,
                           (uint64_t{sw.shard_of_slot[w.slot]} << 32) | sw.index);
  const uint64_t interval = bfc_bitmap_interval_ns(bc.bitmap_interval_ns, hop_rtt);
  try {
    auto shard = std::make_unique<BfcShard>(c);
    for (const BfcElidedPairs& pairs : bc.no_backpressure) {
      for (const std::string& from : pairs.from) {
        for (const std::string& to : pairs.to) {
          const int in = find_port(rt, PortRef{sw.cfg->name, from});
          const int out = find_port(rt, PortRef{sw.cfg->name, to});
          if (in < 0 || out < 0) return sw.cfg->name + ": bfc.no_backpressure: unknown port";
          shard->counters().elide_pair(static_cast<uint16_t>(in), static_cast<uint16_t>(out));
        }
      }
    }
    b.shards[w.slot] = std::move(shard);
    b.bitmaps[w.slot] = std::make_unique<BitmapSchedule>(facing, interval, 0);
  } catch (const std::exception& e) {
    return sw.cfg->name + ": BFC: " + e.what();
  }
  return "";
}

// BFC's bitmap refresh of one switch's shard on this lcore, as an element
// of the emulator's calendar.
class BitmapRefresh final : public CalendarElement {
 public:
  BitmapRefresh(BfcModule& m, uint16_t sw) : m_(m), sw_(sw) {}
  uint64_t due(uint64_t now, uint8_t) override {
    return std::max(m_.bitmaps_of(sw_)->next_due_ns(), now);
  }
  uint8_t run(uint64_t now) override {
    m_.send_bitmaps_of(sw_, now);
    return kAllParts;
  }
  const char* name() const override { return "BFC bitmap refresh"; }

 private:
  BfcModule& m_;
  uint16_t sw_;
};

}  // namespace

std::string BfcModule::build(Runtime& rt) {
  bool any = false;
  for (const SwitchRuntime& sw : rt.switches) any |= sw.cfg->bfc.enabled;
  if (!any) return "";
  // Our slots are the shard bytes our frames carry; a peer accepts 0..63.
  if (rt.workers.size() > UpstreamPauseState::kMaxShards)
    return "BFC supports at most 64 worker lcores (shards)";
  auto s = std::make_unique<BfcModuleState>();
  s->switches.resize(rt.switches.size());
  s->ports = std::make_unique<BfcPort[]>(rt.ports.size());
  s->frames.resize(rt.workers.size());
  for (auto& f : s->frames) f = std::vector<BfcFrames>(rt.ports.size());
  for (SwitchRuntime& sw : rt.switches) {
    if (!sw.cfg->bfc.enabled) continue;
    sw.flow_hash = true;
    sw.ingress_meta = true;
    auto b = std::make_unique<BfcSwitch>();
    b->shards.resize(rt.workers.size());
    b->bitmaps.resize(rt.workers.size());
    b->hop_rtt_ns = switch_hop_rtt_ns(rt, sw);
    const SwitchTables t = tables_of(rt, sw);
    for (auto& w : rt.workers) {
      if (std::string err = create_shard(rt, sw, *b, *w, t); !err.empty()) return err;
    }
    for (uint16_t g : sw.ports) {
      PortRuntime& p = *rt.ports[g];
      BfcPort& bp = s->ports[g];
      p.module[kId] = &bp;
      bp.shard = b->shards[p.owner_slot].get();
      bp.nic = bfc_nic(*p.cfg);
      p.reads_upstream_queue = bp.nic;
      if (p.cfg->role != PortRole::kSwitch) continue;
      bp.peer = true;
      p.reads_upstream_queue = true;
      bp.upstream = std::make_unique<UpstreamPauseState>(p.tm.get());
    }
    sw.module[kId] = b.get();
    s->switches[sw.index] = std::move(b);
  }
  rt.control_rings = true;
  rt.module_state[kId] = std::move(s);
  return "";
}

BfcModule::BfcModule(Worker& w) : w_(w), s_(state(w.rt())) {
  if (s_ != nullptr) frames_ = &s_->frames[w.slot()];
}

BitmapSchedule* BfcModule::bitmaps_of(uint16_t sw) const {
  const BfcSwitch* b = of(w_.rt().switches[sw]);
  return b != nullptr ? b->bitmaps[w_.slot()].get() : nullptr;
}

// The flow table's entry loses the packet, the queue may have emptied, and
// a flagged packet's leaving may resume its upstream queue.
void BfcModule::depart(PortRuntime& port, const TmPacket& p, uint64_t now) {
  if (p.queue == port.reply_queue) return;  // a reply, outside BFC's queues
  const MbufExtra* x = mbuf_extra(static_cast<rte_mbuf*>(p.handle));
  BfcTicket t;
  t.entry = x->bfc.entry;
  t.ingress = x->ingress;
  t.upstream_queue = x->upstream_queue;
  t.flagged = x->bfc_flagged != 0;
  const bool empty = port.tm->queue(p.queue).empty();
  if (at(port)->shard->on_departure(port.index, p.queue, empty, t, now) == BfcSignal::kResume)
    send(w_, t.ingress, ControlType::kBfcResume, t.upstream_queue, now);
}

// BFC frames from the downstream of a switch-facing port drive its
// upstream pause state.
void BfcModule::control(PortRuntime& in, rte_mbuf* m, const ControlMessage& msg, uint64_t) {
  BfcPort* b = at(in);
  if (b == nullptr || !b->upstream) return w_.drop(in.index, m, DropReason::kControlUnsupported);
  if (!b->upstream->on_message(msg)) return w_.drop(in.index, m, DropReason::kControlInvalid);
  w_.touch(in.index);  // the port's own queues: paused or resumed
  (*frames_)[in.index].received[frame_index(msg.type)].add();
  w_.counters(in.index).rx_consumed_packets.add();
  rte_pktmbuf_free(m);
}

void BfcModule::send(Worker& w, uint16_t port_index, ControlType type, uint16_t queue,
                     uint64_t now) {
  PortRuntime& port = w.port(port_index);
  uint8_t* frame;
  MacAddr dst;
  rte_mbuf* m = w.new_frame_to_peer(port, &frame, &dst);
  if (m == nullptr) return;
  const uint8_t shard = w.shard(port.switch_index);
  if (type == ControlType::kBfcPause)
    build_bfc_pause(frame, kEthMinFrameLen, dst, port.mac, shard, queue);
  else
    build_bfc_resume(frame, kEthMinFrameLen, dst, port.mac, shard, queue);
  (*w.module<BfcModule>().frames_)[port_index].sent[frame_index(type)].add();
  w.send_from(port, m, now);
}

// Every shard re-sends, per switch-facing port, the upstream queues it holds
// paused there, so that a lost pause or resume heals within one interval.
void BfcModule::send_bitmaps(uint64_t now) {
  for (size_t s = 0; s < s_->switches.size(); ++s) send_bitmaps_of(static_cast<uint16_t>(s), now);
}

void BfcModule::send_bitmaps_of(uint16_t s, uint64_t now) {
  BitmapSchedule* sched = bitmaps_of(s);
  if (sched == nullptr || now < sched->next_due_ns()) return;
  const PauseCounters& held = of(w_.rt().switches[s])->shards[w_.slot()]->counters();
  sched->poll(now, [&](uint16_t p) {
    PortRuntime& port = w_.port(p);
    uint8_t* frame;
    MacAddr dst;
    const QueueSet& paused = held.paused(p);
    const uint32_t len = bfc_bitmap_len(static_cast<uint16_t>(paused.size()));
    rte_mbuf* m = w_.new_frame_to_peer(port, &frame, &dst, len);
    if (m == nullptr) return;
    build_bfc_bitmap(frame, len, dst, port.mac, w_.shard(port.switch_index), paused.words(),
                     static_cast<uint16_t>(paused.size()));
    (*frames_)[p].sent[frame_index(ControlType::kBfcBitmap)].add();
    w_.send_from(port, m, now);
  });
}

void BfcModule::elements(FabricLoop& loop) {
  if (s_ == nullptr) return;
  for (uint16_t s = 0; s < s_->switches.size(); ++s) {
    if (bitmaps_of(s) != nullptr) loop.add(std::make_unique<BitmapRefresh>(*this, s));
  }
}

uint64_t BfcModule::threshold(const PortRuntime& port) {
  const BfcPort* b = at(port);
  return b != nullptr ? b->shard->last_threshold(port.index) : 0;
}

namespace {

struct FrameTotals {
  uint64_t sent[3] = {}, received[3] = {};
};

FrameTotals frame_totals(const BfcModuleState& s, uint16_t port) {
  FrameTotals t;
  for (const auto& lcore : s.frames) {
    for (unsigned i = 0; i < 3; ++i) {
      t.sent[i] += lcore[port].sent[i].get();
      t.received[i] += lcore[port].received[i].get();
    }
  }
  return t;
}

}  // namespace

void BfcModule::collect(const Runtime& rt, MetricFamilies& out) {
  using prometheus::MetricType;
  const BfcModuleState* s = state(rt);
  auto sent = metric_family("sluice_bfc_frames_sent_total",
                            "BFC frames sent out of this port to its upstream, by type.",
                            MetricType::Counter);
  auto recv = metric_family("sluice_bfc_frames_received_total",
                            "BFC frames from this port's downstream that were applied, by type.",
                            MetricType::Counter);
  auto lost =
      metric_family("sluice_bfc_frames_lost_total",
                    "BFC frames built for this port but not queued (no mbuf, peer MAC unknown, "
                    "control ring full); the next bitmap repairs them.",
                    MetricType::Counter);
  auto held = metric_family("sluice_bfc_paused_upstream_queues",
                            "Upstream queues this switch holds paused through this ingress port.",
                            MetricType::Gauge);
  auto paused =
      metric_family("sluice_bfc_paused_queues",
                    "Data queues of this egress port paused by its downstream.", MetricType::Gauge);
  auto active =
      metric_family("sluice_bfc_active_queues",
                    "Non-empty, non-paused data queues of this egress port (N_active), as of "
                    "its last enqueue.",
                    MetricType::Gauge);
  auto th = metric_family("sluice_bfc_threshold_bytes",
                          "Pause threshold Th of this egress port, as of its last enqueue.",
                          MetricType::Gauge);
  auto repairs = metric_family(
      "sluice_bfc_bitmap_repairs_total",
      "Queue holds a BFC bitmap from this port's downstream changed: a pause or resume frame "
      "that never arrived, by kind (pause, resume).",
      MetricType::Counter);
  auto unknown =
      metric_family("sluice_bfc_bitmap_unknown_queues_total",
                    "BFC bitmaps from this port's downstream that paused queues the port "
                    "lacks; those bits were ignored and the rest applied.",
                    MetricType::Counter);
  for (const auto& p : rt.ports) {
    const BfcPort* b = at(*p);
    if (b == nullptr) continue;
    const PortTotals t = rt.port_totals(p->index);
    const FrameTotals f = frame_totals(*s, p->index);
    const MetricLabels l = port_labels(rt, p->index);
    add_frames_by_type(sent, recv, l, kBfcFrameTypes, f.sent, f.received);
    add_metric_value(lost, l, double(t.control_lost));
    int holds = 0;
    for (const auto& shard : of(rt.switches[p->switch_index])->shards) {
      if (shard != nullptr) holds += shard->counters().paused_count(p->index);
    }
    add_metric_value(held, l, holds);
    add_metric_value(paused, l, b->upstream ? double(b->upstream->paused_count()) : 0);
    add_metric_value(active, l, double(b->shard->last_active_queues(p->index)));
    add_metric_value(th, l, double(b->shard->last_threshold(p->index)));
    if (b->upstream == nullptr) continue;
    const UpstreamPauseState& u = *b->upstream;
    add_metric_value(unknown, l, double(u.unknown_queue_bitmaps.get()));
    MetricLabels kind = l;
    kind.push_back({"kind", "pause"});
    add_metric_value(repairs, kind, double(u.bitmap_repaired_pauses.get()));
    kind.back().value = "resume";
    add_metric_value(repairs, kind, double(u.bitmap_repaired_resumes.get()));
  }
  for (auto* f : {&sent, &recv, &lost, &held, &paused, &active, &th, &unknown, &repairs})
    out.push_back(std::move(*f));

  auto entries = metric_family("sluice_bfc_flow_table_entries", "Size of the BFC flow table.",
                               MetricType::Gauge);
  auto occupied =
      metric_family("sluice_bfc_flow_table_occupied",
                    "Flow-table entries with packets in the switch.", MetricType::Gauge);
  auto index_coll =
      metric_family("sluice_bfc_flow_table_collisions_total",
                    "Flows that found their flow-table entry held by another flow with "
                    "packets in the switch.",
                    MetricType::Counter);
  auto queue_coll = metric_family(
      "sluice_bfc_queue_collisions_total",
      "Dynamic assignments that found no empty queue and took a random one.", MetricType::Counter);
  for (const SwitchRuntime& sw : rt.switches) {
    const BfcSwitch* b = of(sw);
    if (b == nullptr) continue;
    uint64_t n = 0, occ = 0, icoll = 0, qcoll = 0;
    for (const auto& shard : b->shards) {
      if (shard == nullptr) continue;
      n += shard->table().size();
      occ += shard->table().occupied();
      icoll += shard->table().index_collisions();
      qcoll += shard->assigner().queue_collisions();
    }
    const MetricLabels l = {{"switch", sw.cfg->name}};
    add_metric_value(entries, l, double(n));
    add_metric_value(occupied, l, double(occ));
    add_metric_value(index_coll, l, double(icoll));
    add_metric_value(queue_coll, l, double(qcoll));
  }
  for (auto* f : {&entries, &occupied, &index_coll, &queue_coll}) out.push_back(std::move(*f));
}

void BfcModule::summary_port(const Runtime& rt, uint16_t pi, JsonFields& field) {
  const BfcPort* b = at(*rt.ports[pi]);
  if (b == nullptr) return;
  const FrameTotals f = frame_totals(*state(rt), pi);
  for (unsigned i = 0; i < 3; ++i) {
    field("bfc_" + std::string(kBfcFrameTypes[i]) + "_sent", f.sent[i]);
    field("bfc_" + std::string(kBfcFrameTypes[i]) + "_received", f.received[i]);
  }
  field("bfc_control_lost", rt.port_totals(pi).control_lost);
  field("bfc_peak_queue_bytes", b->peak_queue_bytes.get());
  field("bfc_peak_excess_bytes", b->peak_excess_bytes.get());
  field("bfc_threshold_bytes", b->shard->last_threshold(pi));
  field("bfc_active_queues", b->shard->last_active_queues(pi));
  const UpstreamPauseState* u = b->upstream.get();
  field("bfc_queues_paused", u ? u->paused_count() : 0);
  field("bfc_bitmap_unknown_queues", u ? u->unknown_queue_bitmaps.get() : 0);
  field("bfc_bitmap_repaired_pauses", u ? u->bitmap_repaired_pauses.get() : 0);
  field("bfc_bitmap_repaired_resumes", u ? u->bitmap_repaired_resumes.get() : 0);
}

// Flow-table and assignment figures of a BFC switch, summed over its shards.
void BfcModule::summary_switch(const Runtime&, const SwitchRuntime& sw, JsonFields& f) {
  const BfcSwitch* b = of(sw);
  if (b == nullptr) return;
  uint64_t n = 0, occ = 0, icoll = 0, qcoll = 0;
  for (const auto& shard : b->shards) {
    if (shard == nullptr) continue;
    n += shard->table().size();
    occ += shard->table().occupied();
    icoll += shard->table().index_collisions();
    qcoll += shard->assigner().queue_collisions();
  }
  JsonObject j;
  j("flow_table_entries", n);
  j("flow_table_occupied_at_stop", occ);
  j("index_collisions", icoll);
  j("queue_collisions", qcoll);
  j("hop_rtt_ns", b->hop_rtt_ns);
  j("th_ns", bfc_th_time_ns(sw.cfg->bfc.th_ns, b->hop_rtt_ns));
  f.raw("bfc", j.str());
}

void BfcModule::telemetry_port(const Runtime& rt, const PortRuntime& p, rte_tel_data* d) {
  const BfcPort* b = at(p);
  if (b == nullptr) return;
  const FrameTotals f = frame_totals(*state(rt), p.index);
  for (unsigned i = 0; i < 3; ++i) {
    rte_tel_data_add_dict_u64(d, ("bfc_" + std::string(kBfcFrameTypes[i]) + "_sent").c_str(),
                              f.sent[i]);
    rte_tel_data_add_dict_u64(d, ("bfc_" + std::string(kBfcFrameTypes[i]) + "_received").c_str(),
                              f.received[i]);
  }
  rte_tel_data_add_dict_u64(d, "bfc_threshold_bytes", b->shard->last_threshold(p.index));
  rte_tel_data_add_dict_u64(d, "bfc_active_queues", b->shard->last_active_queues(p.index));
  if (!b->upstream) return;
  rte_tel_data_add_dict_u64(d, "bfc_paused_queue_mask", b->upstream->paused_mask());
  rte_tel_data_add_dict_u64(d, "bfc_bitmap_unknown_queues",
                            b->upstream->unknown_queue_bitmaps.get());
  rte_tel_data_add_dict_u64(d, "bfc_bitmap_repaired_pauses",
                            b->upstream->bitmap_repaired_pauses.get());
  rte_tel_data_add_dict_u64(d, "bfc_bitmap_repaired_resumes",
                            b->upstream->bitmap_repaired_resumes.get());
}

}  // namespace sluice
