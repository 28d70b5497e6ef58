#include "switch/emulator/fabric_loop.h"

#include <rte_mbuf.h>
#include <rte_mempool.h>

#include <cinttypes>
#include <cstdio>
#include <cstdlib>

#include "switch/emulator/port_element.h"
#include "switch/emulator/window_sync.h"
#include "switch/path/worker.h"

namespace sluice {
namespace {

// How often the loop tells the main lcore where fabric time is, and looks
// at the stop flag (SIGINT), in elements handled.
constexpr uint64_t kPublishEvery = 256;

}  // namespace

FabricLoop::FabricLoop(Worker& w) : w_(w), cal_(0) {
  Runtime& rt = w.rt();
  // A port's id is its global index (those of other lcores stay empty).
  ports_.assign(rt.ports.size(), nullptr);
  port_count_ = static_cast<uint32_t>(rt.ports.size());
  for (const auto& p : rt.ports) {
    auto e = std::make_unique<PortElement>(w, *p);
    if (p->owner_slot == w.slot()) ports_[p->index] = e.get();
    elements_.push_back(p->owner_slot == w.slot() ? e.get() : nullptr);
    owned_.push_back(std::move(e));
    // A link whose sending end another lcore owns.
    if (p->owner_slot == w.slot() && p->link_out != nullptr &&
        rt.ports[p->link_out->rx_port]->owner_slot != w.slot())
      cross_in_.push_back(p->index);
  }
  set_port_lines();
  cross_in_mask_.assign(rt.ports.size(), 0);
  for (uint16_t p : cross_in_) cross_in_mask_[p] = 1;
  w.each_module([&](auto& m) {
    if constexpr (requires { m.elements(*this); }) m.elements(*this);
  });
  // Ports (16-bit indices), a few timers per switch and Flowtune's edges:
  // far fewer than EventCalendar::kMaxElements.
  cal_ = WheelCalendar(static_cast<uint32_t>(elements_.size()));
  dirty_.assign(elements_.size(), 0);
  in_ready_.assign(elements_.size(), 0);
  touched_.reserve(elements_.size());  // no allocation once the run is under way
  ready_.reserve(elements_.size());
}

FabricLoop::~FabricLoop() = default;

// Each port's line (port_lines.h): the bases of what handling it touches
// first. A base the port lacks (a host port's link) repeats the runtime's,
// so that prefetching stays branch-free.
void FabricLoop::set_port_lines() {
  Runtime& rt = w_.rt();
  lines_.assign(rt.ports.size(), PortLines{});
  for (const auto& p : rt.ports) {
    if (ports_[p->index] == nullptr) continue;
    PortLines& l = lines_[p->index];
    const char* runtime = reinterpret_cast<const char*>(p.get());
    l.runtime = runtime;
    l.tm = reinterpret_cast<const char*>(p->tm.get());
    l.counters = reinterpret_cast<const char*>(&w_.counters(p->index));
    l.medium = reinterpret_cast<const char*>(p->medium.get());
    l.link_out = runtime;
    l.rx_state = runtime;
    if (p->link_out != nullptr) {
      l.link_out = reinterpret_cast<const char*>(p->link_out);
      // The receiver reads only its ring's line.
      if (const LinkDirection* in = rt.ports[p->link_out->rx_port]->link_out)
        l.rx_state = reinterpret_cast<const char*>(in);
    }
    l.element = reinterpret_cast<const char*>(ports_[p->index]);
    ports_[p->index]->set_lines(&l);
    const auto line = [&](const void* at) {
      return static_cast<uint32_t>(reinterpret_cast<const char*>(at) - l.tm);
    };
    pass_lines_ = {line(p->tm->scheduler_line()), line(p->tm->pass_line())};
  }
  if (const rte_mempool* pool = rt.mbufs->first())
    frame_data_ = sizeof(rte_mbuf) + rte_pktmbuf_priv_size(const_cast<rte_mempool*>(pool)) +
                  RTE_PKTMBUF_HEADROOM;
}

uint32_t FabricLoop::add(std::unique_ptr<CalendarElement> e) {
  elements_.push_back(e.get());
  owned_.push_back(std::move(e));
  return static_cast<uint32_t>(elements_.size() - 1);
}

// Files element `id`: in the ready list when it is due now, else in the
// calendar.
[[gnu::always_inline]] inline void FabricLoop::schedule(uint32_t id, uint64_t due) {
  if (due > now_) {
    cal_.set(id, due);
    return;
  }
  if (in_ready_[id]) return;
  in_ready_[id] = 1;
  ready_.push_back(id);
  cal_.remove(id);
}

// Asks element `id` again for the parts in `what` and files it: in the
// ready list when it is due now, else in the calendar.
[[gnu::always_inline]] inline void FabricLoop::settle(uint32_t id, uint8_t what, uint64_t now) {
  // Nearly every element asked is a port: called directly, its due()
  // inlines (PortElement is final).
  if (id < port_count_) {
    PortElement* p = ports_[id];
    if (p != nullptr) schedule(id, p->due(now, what));
    return;
  }
  CalendarElement* e = elements_[id];
  if (e == nullptr) return;
  schedule(id, e->due(now, what));
}

// Handles element `id` at `now`, then asks it and every element it
// touched when each is next due.
[[gnu::always_inline]] inline void FabricLoop::handle(uint32_t id, uint64_t now) {
  const uint8_t again = id < port_count_ ? ports_[id]->run(now) : elements_[id]->run(now);
  // The element itself is asked after what it touched (unless it touched
  // itself), as touch() would order it, without a trip through the list.
  const bool self_touched = dirty_[id] != 0;
  if (self_touched) dirty_[id] |= again;
  for (size_t i = 0; i < touched_.size(); ++i) {
    const uint32_t other = touched_[i];
    const uint8_t what = dirty_[other];
    dirty_[other] = 0;
    settle(other, what, now);
  }
  touched_.clear();
  if (!self_touched) settle(id, again, now);
}

void FabricLoop::run() {
  Runtime& rt = w_.rt();
  WorkerRuntime& wr = w_.lcore();
  WindowSync* sync = rt.window_sync.get();
  uint64_t now = rt.start_ns;
  now_ = now;
  for (uint32_t id = 0; id < elements_.size(); ++id) {
    if (elements_[id] != nullptr) settle(id, kAll, now);
  }
  uint64_t events = 0, instants = 0;
  bool stuck = false, stopped = false;
  // SLUICE_EXACT_AUDIT=1 checks the calendar after every element (slow:
  // every element asked each time; for tests on small fabrics).
  const char* audit_env = std::getenv("SLUICE_EXACT_AUDIT");
  const bool audit_each = audit_env != nullptr && audit_env[0] == '1';
  // One lcore handles everything due before the run's end in one go; with
  // several, each handles a window at a time and they meet in between
  // (window_sync.h).
  uint64_t limit = rt.end_ns;
  for (;;) {
    if (sync != nullptr) {
      take_arrivals(now);
      const uint64_t mine = ready_head_ < ready_.size() ? now : cal_.next_time();
      bool stop = stopped || rt.stop.load(std::memory_order_relaxed);
      const uint64_t start = sync->agree_start(w_.slot(), mine, &stop);
      if (stop) break;
      if (start >= rt.end_ns) {  // nothing more before the end anywhere
        if (rt.end_ns != UINT64_MAX) now = rt.end_ns;
        break;
      }
      limit = std::min(rt.end_ns, start + sync->lookahead_ns());
    }
    limit_ = limit;
    for (;;) {
      uint32_t id;
      const bool from_ready = ready_head_ < ready_.size();
      if (from_ready) {
        id = ready_[ready_head_++];
        in_ready_[id] = 0;
      } else {
        ready_.clear();
        ready_head_ = 0;
        const uint64_t t = cal_.next_time();
        if (t >= limit) {  // nothing more before the window's end, or the run's
          if (sync == nullptr && rt.end_ns != UINT64_MAX) now = rt.end_ns;
          break;
        }
        // Left in place: handling files it again (settle), and moving the
        // top down once is cheaper than a pop and a push.
        id = cal_.next_element();
        if (t != now) {
          now = t;
          now_ = now;
          ++instants;
          at_instant_ = 0;
        }
      }
      if (++at_instant_ > kMaxEventsPerInstant) {
        report_stuck(id, now);
        stuck = true;
        break;
      }
      if (events % kPublishEvery == 0) {
        wr.clock_now_ns.set(now);
        if (rt.stop.load(std::memory_order_relaxed)) {
          stopped = true;
          break;
        }
        // The pool's high-water mark, sampled (within kPublishEvery mbufs).
        const uint64_t used = rt.mbufs->in_use();
        if (used > wr.mbuf_peak_in_use.get()) wr.mbuf_peak_in_use.set(used);
      }
      // The element likely handled next asks for its memory now, so that
      // its cache misses overlap this one's work (a large fabric's loop is
      // bound by them).
      const uint32_t next = ready_head_ < ready_.size() ? ready_[ready_head_]
                            : from_ready                ? cal_.next_element_or_none()
                                                        : cal_.likely_second();
      if (next < port_count_) {
        if (lines_[next].runtime != nullptr) prefetch_for_arrival(lines_[next], frame_data_);
      } else if (next != WheelCalendar::kNone && elements_[next] != nullptr) {
        elements_[next]->prefetch();
      }
      handle(id, now);
      ++events;
      if (audit_each) audit(now);
    }
    if (sync == nullptr || stuck) break;
    sync->end_window();
  }
  if (stuck && sync != nullptr) sync->abort();
  if (!stuck) audit(now);
  wr.clock_now_ns.set(now);
  wr.exact_events.set(events);
  wr.exact_instants.set(instants);
  if (stuck) wr.exact_stuck.add();
  w_.finish(now);
}

// Several lcores: frames other lcores put on this one's links in the last
// window arrive no sooner than the next one's start; their ports' arrivals
// part is asked again.
void FabricLoop::take_arrivals(uint64_t now) {
  for (uint16_t p : cross_in_) settle(p, kRx, now);
}

// Which element keeps time from moving is a guess: the one due next after
// that many handlings, of any elements, at one instant.
void FabricLoop::report_stuck(uint32_t id, uint64_t now) const {
  std::fprintf(stderr,
               "sluice: exact time: %" PRIu64 " elements handled at %" PRIu64
               " ns without time moving on; the next due was element %" PRIu32
               " (%s); stopping the run\n",
               kMaxEventsPerInstant, now, id, elements_[id]->name());
  char parts[160];
  elements_[id]->describe(parts, sizeof parts);
  if (parts[0] != '\0') std::fprintf(stderr, "sluice: exact time: %s\n", parts);
}

// The calendar's invariant: an element with something to do is due no
// later than it should be (an entry, or in the ready list at `now`).
// Checked once at the end of every run (and after every element under
// SLUICE_EXACT_AUDIT); a breach is a rule that changed what an element will
// do without asking it again: counted, reported, and repaired so the run
// goes on.
void FabricLoop::audit(uint64_t now) {
  WorkerRuntime& wr = w_.lcore();
  for (uint32_t id = 0; id < elements_.size(); ++id) {
    CalendarElement* e = elements_[id];
    if (e == nullptr) continue;
    const uint64_t due = e->due_fresh(now);
    const uint64_t scheduled = in_ready_[id] ? now : cal_.due(id);
    if (due >= scheduled || due >= w_.rt().end_ns) continue;
    // A frame another lcore put on this port's link during the window: it
    // arrives after the window and is taken in at its end, by design.
    if (id < cross_in_mask_.size() && cross_in_mask_[id] && due >= limit_) continue;
    if (wr.exact_missed.get() < 10) {
      std::fprintf(stderr,
                   "sluice: exact time: element %" PRIu32 " (%s) was due at %" PRIu64
                   " ns but was scheduled for %" PRIu64 " (at %" PRIu64 " ns)\n",
                   id, e->name(), due, scheduled, now);
      char parts[160];
      e->describe(parts, sizeof parts);
      if (parts[0] != '\0') std::fprintf(stderr, "sluice: exact time: %s\n", parts);
    }
    wr.exact_missed.add();
    settle(id, kAll, now);
  }
}

void FabricLoop::link_arrival(uint16_t rx, uint64_t due, const rte_mbuf* frame) {
  PortElement* p = ports_[rx];
  if (p == nullptr || !p->lower_rx(due, frame)) return;
  if (!in_ready_[rx]) cal_.at_least(rx, due);
}

// Out of line: the real-time path that calls it never takes the call, and
// its code inlined would sit in the middle of Worker::forward.
void FabricLoop::prefetch_port(uint16_t index) const {
  const PortLines& l = lines_[index];
  if (l.runtime != nullptr) prefetch_for_admission(l, pass_lines_);
}

// Modules whose port timers follow what any port of the switch holds
// (PFC's dynamic XOFF thresholds follow the free buffer).
void FabricLoop::modules_admitted(PortRuntime& out) {
  w_.each_module([&](auto& m) {
    if constexpr (requires { m.admitted_at(out); }) m.admitted_at(out);
  });
}

void FabricLoop::admitted(PortRuntime& out, uint64_t now) {
  modules_admitted(out);
  if (sends_at_once(out, now)) {
    w_.transmit(out, now);
    after_send(out);
  }
  touch(out.index, kTx);
}

// Not when already due now (it sends at this instant anyway), or busy
// until later.
bool FabricLoop::sends_at_once(const PortRuntime& out, uint64_t now) const {
  if (ports_[out.index]->tx_due() != CalendarElement::kNever || out.tx_pending_count != 0)
    return false;
  return out.link_out != nullptr ? out.link_out->timing.wire_free_ns() <= now
                                 : out.tm->shaper().next_ready_ns() <= now;
}

void FabricLoop::passed(PortRuntime& out, rte_mbuf* m, uint64_t now) {
  modules_admitted(out);
  w_.transmit_passed(out, m, now);
  after_send(out);
  // The wire's part was idle (sends_at_once) and stays so once the medium
  // took the frame: nothing is queued (a bucket in debt matters only to
  // what waits: EgressPort::next_event_ns). Asked again, it would file
  // the port where it already is, unless the port is due now (then the
  // ready list decides its place at this instant).
  if (out.tx_pending_count != 0 || ports_[out.index]->earliest() <= now) touch(out.index, kTx);
}

// What a send from `out` touches: the modules' parts, and a host's NIC.
void FabricLoop::after_send(PortRuntime& out) {
  uint8_t again = 0;
  w_.each_module([&](auto& m) {
    if constexpr (requires { m.port_transmitted(out); }) again |= m.port_transmitted(out);
  });
  if (again != 0) touch(out.index, again);
  if (out.medium->answers()) touch(out.index, kRx);
}

}  // namespace sluice
