#include "switch/ops/queue_trace.h"

#include <algorithm>
#include <bit>
#include <cinttypes>
#include <cstdio>
#include <utility>

#include "switch/emulator/fabric_loop.h"
#include "switch/mechanisms/registry.h"
#include "switch/path/worker.h"
#include "switch/ops/queue_trace_module.h"
#include "switch/runtime/runtime.h"

namespace sluice {

QueueTrace::QueueTrace(size_t max_rows, uint64_t interval_ns, std::vector<uint16_t> ports)
    : max_rows_(max_rows), interval_ns_(interval_ns), ports_(std::move(ports)) {
  rows_.reserve(max_rows_);  // nothing is allocated while sampling
}

void QueueTrace::add(const QueueTraceRow& r) {
  if (rows_.size() < max_rows_)
    rows_.push_back(r);
  else
    ++missed_;
}

void QueueTrace::sample(const Runtime& rt, const WorkerRuntime& w, uint64_t now_ns) {
  next_ns_ = now_ns + interval_ns_;
  uint64_t switches_seen = 0;  // bit s: buffer row of switch s written
  for (uint16_t p : ports_) {
    const PortRuntime& port = *rt.ports[p];
    const EgressPort& tm = *port.tm;
    // Held by the downstream now: a BFC pause, a PFC class or a PAUSE.
    const uint64_t paused = tm.paused_queues(now_ns);
    for (uint32_t q = 0; q < tm.num_queues(); ++q) {
      const uint64_t bytes = tm.depth_bytes(static_cast<uint16_t>(q));
      const uint8_t held = (paused >> q) & 1;
      uint8_t tcd = 0;  // a module's state of the queue (TCD's: 1 + its state)
      Modules::each_type([&]<class M>() {
        if constexpr (requires { M::queue_state(port, q); }) tcd = M::queue_state(port, q);
      });
      // An empty queue TCD does not call non-congestion is a row too.
      if (bytes == 0 && !held && tcd <= 1) continue;
      add({now_ns, static_cast<uint32_t>(bytes), 0, p, static_cast<int8_t>(q), held, tcd});
    }
    uint64_t th = 0;  // a module's threshold of the port (BFC's Th)
    Modules::each_type([&]<class M>() {
      if constexpr (requires { M::threshold(port); }) th = M::threshold(port);
    });
    add({now_ns, static_cast<uint32_t>(tm.data_queued_bytes()), static_cast<uint32_t>(th), p,
         kPortRow, static_cast<uint8_t>(std::popcount(paused)), 0});
    const uint16_t s = port.switch_index;
    if (s < 64 && !((switches_seen >> s) & 1)) {
      switches_seen |= uint64_t{1} << s;
      const SharedBuffer* b = w.buffers[s].get();
      if (b != nullptr) add({now_ns, static_cast<uint32_t>(b->used()), 0, s, kBufferRow, 0, 0});
    }
  }
}

void QueueTraceModule::configure(Runtime& rt, const std::vector<uint16_t>& ports,
                                 uint64_t interval_ns, size_t max_rows) {
  auto s = std::make_unique<QueueTraceModuleState>();
  s->traces.resize(rt.workers.size());
  for (auto& w : rt.workers) {
    std::vector<uint16_t> mine;
    for (uint16_t p : w->ports) {
      if (ports.empty() || std::find(ports.begin(), ports.end(), p) != ports.end())
        mine.push_back(p);
    }
    if (!mine.empty())
      s->traces[w->slot] = std::make_unique<QueueTrace>(max_rows, interval_ns, std::move(mine));
  }
  rt.module_state[kId] = std::move(s);
}

bool QueueTraceModule::write(const Runtime& rt, const std::string& path, std::string* error) {
  const auto* s = static_cast<const QueueTraceModuleState*>(rt.module_state[kId].get());
  std::vector<const QueueTraceRow*> all;
  uint64_t missed = 0;
  for (const auto& t : s->traces) {
    if (!t) continue;
    for (const QueueTraceRow& r : t->rows()) all.push_back(&r);
    missed += t->missed();
  }
  std::stable_sort(all.begin(), all.end(), [](const QueueTraceRow* a, const QueueTraceRow* b) {
    return a->t_ns < b->t_ns;
  });
  FILE* f = std::fopen(path.c_str(), "w");
  if (f == nullptr) {
    *error = "cannot write " + path;
    return false;
  }
  std::fprintf(f, "time_seconds,switch,port,queue,bytes,threshold_bytes,paused,tcd_state\n");
  for (const QueueTraceRow* r : all) {
    // Capture (sender) time, the clock of the replayed captures and flows.csv.
    const double t = (static_cast<double>(r->t_ns) - static_cast<double>(rt.replay_start_ns) +
                      static_cast<double>(rt.replay_origin_ts_ns)) *
                     1e-9;
    if (r->queue == QueueTrace::kBufferRow) {
      std::fprintf(f, "%.9f,%s,,buffer,%u,0,0,\n", t, rt.switches[r->port].cfg->name.c_str(),
                   r->bytes);
      continue;
    }
    const std::string q = r->queue == QueueTrace::kPortRow ? "port" : std::to_string(r->queue);
    const char* tcd = r->tcd == 0 ? "" : tcd_state_name(static_cast<TcdState>(r->tcd - 1));
    std::fprintf(f, "%.9f,%s,%s,%s,%u,%u,%u,%s\n", t, rt.switch_label(r->port).c_str(),
                 rt.port_label(r->port).c_str(), q.c_str(), r->bytes, r->threshold_bytes, r->paused,
                 tcd);
  }
  const bool ok = std::fclose(f) == 0;
  if (!ok) *error = "cannot write " + path;
  if (missed != 0)
    std::fprintf(stderr, "sluice: queue trace full: %" PRIu64 " rows not recorded\n", missed);
  return ok;
}

namespace {

// The trace's next sample, as an element of the emulator's calendar.
class TraceSample final : public CalendarElement {
 public:
  TraceSample(QueueTrace& t, const Runtime& rt, const WorkerRuntime& w) : t_(t), rt_(rt), w_(w) {}
  uint64_t due(uint64_t now, uint8_t) override { return std::max(t_.next_ns(), now); }
  uint8_t run(uint64_t now) override {
    t_.sample(rt_, w_, now);
    return kAllParts;
  }
  const char* name() const override { return "queue trace"; }

 private:
  QueueTrace& t_;
  const Runtime& rt_;
  const WorkerRuntime& w_;
};

}  // namespace

QueueTraceModule::QueueTraceModule(Worker& w) : w_(w) {
  const auto* s = static_cast<const QueueTraceModuleState*>(w.rt().module_state[kId].get());
  if (s != nullptr) trace_ = s->traces[w.slot()].get();
}

bool QueueTraceModule::timers(uint64_t now) {
  if (trace_ != nullptr && now >= trace_->next_ns()) trace_->sample(w_.rt(), w_.lcore(), now);
  return false;
}

void QueueTraceModule::elements(FabricLoop& loop) {
  if (trace_ != nullptr)
    loop.add(std::make_unique<TraceSample>(*trace_, w_.rt(), w_.lcore()));
}

}  // namespace sluice
