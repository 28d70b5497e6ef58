#include "switch/mechanisms/dibs/dibs_module.h"

#include <algorithm>

#include "lib/common/seeds.h"
#include "lib/control/data_shim.h"
#include "lib/net/ethertypes.h"
#include "switch/path/worker.h"

namespace sluice {
namespace {

DibsModuleState* state(const Runtime& rt) {
  return static_cast<DibsModuleState*>(rt.module_state[DibsModule::kId].get());
}

bool is_dibs_switch_port(const Runtime& rt, uint16_t g) {
  const PortRuntime& p = *rt.ports[g];
  return rt.switches[p.switch_index].cfg->dibs.enabled && p.cfg->role == PortRole::kSwitch;
}

// The internal link's far end is a port of a DIBS switch.
bool link_from_dibs(const Runtime& rt, const PortRuntime& p) {
  const std::string& ref = p.cfg->link_peer;
  const size_t slash = ref.find('/');
  if (p.kind != PortKind::kLink || slash == std::string::npos) return false;
  const int peer = find_port(rt, PortRef{ref.substr(0, slash), ref.substr(slash + 1)});
  return peer >= 0 && is_dibs_switch_port(rt, static_cast<uint16_t>(peer));
}

std::unique_ptr<DibsSwitch> make_switch(Runtime& rt, SwitchRuntime& sw, DibsPort* ports) {
  auto d = std::make_unique<DibsSwitch>();
  d->local.assign(rt.ports.size(), 0);
  for (size_t i = 0; i < sw.ports.size(); ++i) {
    const uint16_t g = sw.ports[i];
    d->local[g] = static_cast<uint16_t>(i);
    PortRuntime& p = *rt.ports[g];
    p.module[DibsModule::kId] = &ports[g];
    // Its arrival step reads the detour count packets bring.
    p.in_steps |= 1u << DibsModule::kId;
    // A refusal on one lcore may pick a candidate another one owns.
    if (p.owner_slot != rt.ports[sw.ports[0]]->owner_slot) d->cross_lcore = true;
    if (p.cfg->role != PortRole::kSwitch) continue;
    d->candidates.push_back(g);
    ports[g].from_dibs_link = link_from_dibs(rt, p);
  }
  d->snapshots = std::make_unique<PortSnapshot[]>(d->candidates.size());
  d->rules.resize(rt.workers.size());
  for (auto& w : rt.workers) {
    bool owns = false;
    for (uint16_t g : sw.ports) owns |= rt.ports[g]->owner_slot == w->slot;
    if (!owns) continue;
    d->rules[w->slot] = std::make_unique<DibsRules>(
        sw.cfg->dibs, static_cast<uint32_t>(sw.ports.size()),
        derive_seed(rt.config.seed, SeedStream::kDibs, sw.index * 64 + sw.shard_of_slot[w->slot]));
  }
  return d;
}

// A DIBS switch's counters summed over its lcores (report, scraper).
struct DibsSwitchTotals {
  uint64_t detours = 0;
  uint64_t drops[kDetourDropCount] = {};
  uint64_t buckets[kDetourBuckets] = {};
  uint64_t exit_detours = 0;  // summed over the packets in buckets
};

DibsSwitchTotals totals(const DibsSwitch& d) {
  DibsSwitchTotals t;
  for (const auto& r : d.rules) {
    if (r == nullptr) continue;
    for (uint32_t p = 0; p < r->counters.port_count(); ++p)
      t.detours += r->counters.detours(static_cast<uint16_t>(p));
    for (unsigned k = 0; k < kDetourDropCount; ++k)
      t.drops[k] += r->counters.drops(static_cast<DetourDrop>(k));
    for (unsigned b = 0; b < kDetourBuckets; ++b) t.buckets[b] += r->counters.bucket(b);
    t.exit_detours += r->counters.exit_detours();
  }
  return t;
}

// Detours into global port p.
uint64_t port_detours(const DibsSwitch& d, uint16_t p) {
  uint64_t n = 0;
  for (const auto& r : d.rules) {
    if (r != nullptr) n += r->counters.detours(d.local[p]);
  }
  return n;
}

}  // namespace

std::string DibsModule::build(Runtime& rt) {
  auto s = std::make_unique<DibsModuleState>();
  s->switches.resize(rt.switches.size());
  bool any = false;
  for (SwitchRuntime& sw : rt.switches) {
    if (!sw.cfg->dibs.enabled) continue;
    if (!s->ports) s->ports = std::make_unique<DibsPort[]>(rt.ports.size());
    s->switches[sw.index] = make_switch(rt, sw, s->ports.get());
    sw.module[kId] = s->switches[sw.index].get();
    any = true;
  }
  if (any) rt.module_state[kId] = std::move(s);
  return "";
}

DibsModule::DibsModule(Worker& w) : w_(w) {
  const DibsModuleState* s = state(w.rt());
  if (s == nullptr) return;
  const Runtime& rt = w.rt();
  size_t candidates = 0;
  claims_.resize(rt.switches.size());
  for (const SwitchRuntime& sw : rt.switches) {
    const DibsSwitch* d = of(sw);
    if (d == nullptr) continue;
    candidates = std::max(candidates, d->candidates.size());
    if (d->cross_lcore) claims_[sw.index].resize(d->candidates.size());
    if (d->rules[w.slot()] == nullptr) continue;
    for (uint32_t c = 0; c < d->candidates.size() && d->cross_lcore; ++c) {
      if (rt.ports[d->candidates[c]]->owner_slot == w.slot()) publish_.push_back({sw.index, c});
    }
  }
  scratch_.resize(candidates);
}

// A shim is believed only from a switch-facing peer (a host cannot claim
// detours); over an internal link from a DIBS switch the count is the one
// that switch's forward stage left in the mbuf.
uint8_t DibsModule::arrival(const PortRuntime& in, rte_mbuf* m, const ParsedPacket& pp) {
  if (pp.has_shim && in.cfg->role == PortRole::kSwitch)
    return read_shim(rte_pktmbuf_mtod(m, const uint8_t*) + pp.shim_offset).detours;
  return at(in)->from_dibs_link && mbuf_meta_get(m).has_detours ? mbuf_extra(m)->detours : 0;
}

// `out` refused the packet, whose L2 header for `out` is written already.
void DibsModule::refuse(PortRuntime& out, rte_mbuf* m, DropReason, uint64_t now) {
  const SwitchRuntime& sw = w_.rt().switches[out.switch_index];
  DibsSwitch& d = *of(sw);
  DibsRules& rules = *d.rules[w_.slot()];
  MbufExtra* x = mbuf_extra(m);
  const MbufMeta meta = mbuf_meta_get(m);
  const uint32_t bytes = m->pkt_len;
  DetourCandidate* c = scratch_.data();
  const uint32_t n = static_cast<uint32_t>(d.candidates.size());
  for (uint32_t i = 0; i < n; ++i) {
    const PortRuntime& p = w_.port(d.candidates[i]);
    c[i].port = d.local[p.index];
    c[i].role = PortRole::kSwitch;
    if (p.owner_slot == w_.slot()) {
      c[i].admits = p.eth_header_ready && detour_admits(*p.tm, meta.queue, bytes, now);
      c[i].queued_bytes = p.tm->queue_bytes(meta.queue);
    } else {
      c[i].admits = claims_[sw.index][i].admits(d.snapshots[i], bytes);
      c[i].queued_bytes = d.snapshots[i].queued_bytes();
    }
  }
  const uint8_t taken = meta.has_detours ? x->detours : 0;
  const DetourDecision dec = rules.on_refused(taken, c, n, d.local[out.index]);
  if (dec.port == kNoDetour) return w_.drop_data(out, m, dec.reason, false, now);
  x->detours = dec.detours;
  PortRuntime& to = w_.port(sw.ports[dec.port]);
  const uint8_t l3 = static_cast<uint8_t>(Worker::data_l3_offset(out));
  const bool remote = to.owner_slot != w_.slot();
  const MbufMeta moved{to.index, l3, meta.queue, meta.ecn_capable, remote, true};
  mbuf_meta_set(m, moved);
  if (!remote) return admit_detour(to, m, moved, now);
  uint32_t i = 0;
  while (c[i].port != dec.port) ++i;  // the chooser returned one of c[0..n)
  claims_[sw.index][i].claim(bytes);
  w_.stage_remote(to.owner_slot, m, now);
}

void DibsModule::redirected(PortRuntime& to, rte_mbuf* m, const MbufMeta& meta, uint64_t now) {
  admit_detour(to, m, meta, now);
}

// The chosen port's owner: the ordinary admission; a refusal (the chooser
// saw an older snapshot) is a drop, never a second detour from here.
void DibsModule::admit_detour(PortRuntime& to, rte_mbuf* m, MbufMeta meta, uint64_t now) {
  if (meta.detour) {
    at(to)->handed_bytes += m->pkt_len;  // another lcore's (its claim)
    meta.detour = false;
    mbuf_meta_set(m, meta);
  }
  const SwitchRuntime& sw = w_.rt().switches[to.switch_index];
  DibsRules& rules = *of(sw)->rules[w_.slot()];
  if (!to.eth_header_ready) return w_.drop_data(to, m, rules.on_detour_refused(), false, now);
  uint8_t* ip = w_.write_l2(to, m, meta, meta.queue);
  TmPacket tp;
  tp.handle = m;
  tp.bytes = m->pkt_len;
  const EnqueueResult r = to.tm->enqueue(now, meta.queue, tp, meta.ecn_capable);
  if (r.verdict == EnqueueVerdict::kDropped)
    return w_.drop_data(to, m, rules.on_detour_refused(), false, now);
  w_.touch(to.index);
  rules.on_detoured(of(sw)->local[to.index]);
  if (meta.ecn_capable) w_.mark_ce(w_.counters(to.index), ip);
}

void DibsModule::depart(PortRuntime& port, const TmPacket& p, uint64_t) {
  rte_mbuf* m = static_cast<rte_mbuf*>(p.handle);
  of(w_.rt().switches[port.switch_index])
      ->rules[w_.slot()]
      ->on_exit(mbuf_meta_get(m).has_detours ? mbuf_extra(m)->detours : 0);
}

void DibsModule::publish_snapshots(uint64_t now) {
  for (const auto& [s, c] : publish_) {
    DibsSwitch& d = *of(w_.rt().switches[s]);
    const PortRuntime& p = w_.port(d.candidates[c]);
    publish_snapshot(*p.tm, now, at(p)->handed_bytes, &d.snapshots[c]);
  }
}

// DIBS per port and per switch (docs/mechanisms/dibs.md); detour drops are
// also port drops (sluice_port_drops_total, reason detour_*).
void DibsModule::collect(const Runtime& rt, MetricFamilies& out) {
  using prometheus::ClientMetric;
  using prometheus::MetricType;
  auto detours = metric_family(
      "sluice_dibs_detours_total",
      "Packets detoured into this port's queue instead of dropped elsewhere.", MetricType::Counter);
  auto drops =
      metric_family("sluice_dibs_detour_drops_total",
                    "Refused packets DIBS could not detour, by reason.", MetricType::Counter);
  auto per_packet = metric_family("sluice_dibs_detours_per_packet",
                                  "Detours each packet had taken when it left the fabric here.",
                                  MetricType::Histogram);
  for (const SwitchRuntime& sw : rt.switches) {
    const DibsSwitch* d = of(sw);
    if (d == nullptr) continue;
    for (uint16_t p : sw.ports)
      add_metric_value(detours, port_labels(rt, p), double(port_detours(*d, p)));
    const DibsSwitchTotals t = totals(*d);
    const MetricLabels l = {{"switch", sw.cfg->name}};
    for (unsigned k = 0; k < kDetourDropCount; ++k) {
      MetricLabels lk = l;
      lk.push_back(
          {"reason", std::string(drop_reason_name(drop_reason_of(static_cast<DetourDrop>(k))))});
      add_metric_value(drops, lk, double(t.drops[k]));
    }
    ClientMetric m;
    m.label = l;
    uint64_t cumulative = 0;
    for (unsigned b = 0; b < kDetourBuckets; ++b) {
      cumulative += t.buckets[b];
      if (b + 1 == kDetourBuckets) continue;  // 255: the serializer's +Inf
      ClientMetric::Bucket bucket;
      bucket.cumulative_count = cumulative;
      bucket.upper_bound = kDetourBucketUpper[b];
      m.histogram.bucket.push_back(bucket);
    }
    m.histogram.sample_count = cumulative;
    m.histogram.sample_sum = double(t.exit_detours);
    per_packet.metric.push_back(std::move(m));
  }
  for (auto* f : {&detours, &drops, &per_packet}) out.push_back(std::move(*f));
}

void DibsModule::summary_port(const Runtime& rt, uint16_t port, JsonFields& f) {
  const DibsSwitch* d = of(rt.switches[rt.ports[port]->switch_index]);
  if (d != nullptr) f("dibs_detours", port_detours(*d, port));
}

// A DIBS switch (docs/metrics.md): detours, detour drops by reason, and
// packets that left the fabric here by detours taken (bucket upper bounds).
void DibsModule::summary_switch(const Runtime&, const SwitchRuntime& sw, JsonFields& f) {
  const DibsSwitch* d = of(sw);
  if (d == nullptr) return;
  const DibsSwitchTotals t = totals(*d);
  JsonObject drops, buckets, dibs;
  for (unsigned k = 0; k < kDetourDropCount; ++k)
    drops(std::string(drop_reason_name(drop_reason_of(static_cast<DetourDrop>(k)))).c_str(),
          t.drops[k]);
  for (unsigned b = 0; b < kDetourBuckets; ++b)
    buckets(("le_" + std::to_string(kDetourBucketUpper[b])).c_str(), t.buckets[b]);
  dibs("detours", t.detours);
  dibs.raw("detour_drops", drops.str());
  dibs.raw("detours_per_packet", buckets.str());
  f.raw("dibs", dibs.str());
}

}  // namespace sluice
