// Exact fabric time (docs/testbed.md, "Exact fabric time"): the worker's
// loop when every port is a capture-file host or an internal link. Fabric
// time never reads the machine's clock. The calendar (lib/fabric/
// event_calendar.h) holds, for each element, the next instant it is due:
//   - a port: a frame arrives on its link or from its host, its host NIC
//     may send or takes a received frame into account, its traffic manager
//     may send (shaper, pause expiry, the link's wire free), its PFC XOFF
//     refresh, its TCD detector leaving undetermined, an ARP retry;
//   - per switch, BFC's bitmap refresh and Floodgate's credit and sync
//     timers; the queue trace's next sample.
// The loop takes the earliest element, handles it at that instant, and
// asks it, and every element it touched (a packet queued at another port,
// a frame put on a link, credit owed), when each is next due. Everything
// due at an instant is handled at that instant, so nothing is late; the
// clock then jumps to the next due instant, so idle time costs nothing;
// and only due elements are visited, so idle ports cost nothing.
// Elements due at one instant go in (instant, element id) order: a run
// repeats byte for byte.

#include <rte_cycles.h>

#include <cinttypes>
#include <cstdio>
#include <cstdlib>

#include "switch/internal_link.h"
#include "switch/worker.h"

namespace sluice {
namespace {

// An element handled this often at one instant asks to run at once and
// does nothing (a rule that cannot make progress): the run stops and says
// so rather than spin forever.
constexpr uint64_t kMaxEventsPerInstant = 50'000'000;
// How often the loop tells the main lcore where fabric time is, and looks
// at the stop flag (SIGINT), in elements handled.
constexpr uint64_t kPublishEvery = 256;

}  // namespace

void Worker::loop_exact() {
  Exact& x = *exact_;
  const uint64_t wall_start = clock_.now_ns();
  uint64_t now = rt_.start_ns;
  x.now = now;
  for (uint32_t id = 0; id < x.cal.elements(); ++id) {
    if (id < x.bfc_base && ports_[id]->owner_slot != w_.slot) continue;
    x.cal.set(id, exact_due(id, now));
  }
  uint64_t events = 0, instants = 0;
  bool stuck = false;
  // SLUICE_EXACT_AUDIT=1 checks the calendar after every element (slow:
  // every element asked each time; for tests on small fabrics).
  const char* audit_env = std::getenv("SLUICE_EXACT_AUDIT");
  const bool audit = audit_env != nullptr && audit_env[0] == '1';
  for (;;) {
    const uint64_t t = x.cal.next_time();
    if (t >= rt_.end_ns) {  // nothing more before the end: the fabric idles to it
      if (rt_.end_ns != UINT64_MAX) now = rt_.end_ns;
      break;
    }
    if (events % kPublishEvery == 0) {
      w_.clock_now_ns.set(now);
      if (rt_.stop.load(std::memory_order_relaxed)) break;
    }
    if (t != now) {
      now = t;
      ++instants;
      x.at_instant = 0;
    } else if (++x.at_instant > kMaxEventsPerInstant) {
      const uint32_t id = x.cal.next_element();
      std::fprintf(stderr,
                   "sluice: exact time: element %" PRIu32 " (%s) was still due at %" PRIu64
                   " ns after %" PRIu64 " handlings at that instant; stopping the run\n",
                   id, id < x.bfc_base ? ports_[id]->cfg->name.c_str() : "timer", t,
                   kMaxEventsPerInstant);
      stuck = true;
      break;
    }
    x.now = now;
    const uint32_t id = x.cal.pop();
    exact_handle(id, now);
    x.cal.set(id, exact_due(id, now));
    for (size_t i = 0; i < x.touched.size(); ++i) {
      const uint32_t other = x.touched[i];
      x.dirty[other] = 0;
      x.cal.set(other, exact_due(other, now));
    }
    x.touched.clear();
    ++events;
    if (audit) audit_calendar(now);
  }
  if (!stuck) audit_calendar(now);
  w_.clock_now_ns.set(now);
  w_.exact_events.set(events);
  w_.exact_instants.set(instants);
  if (stuck) w_.exact_stuck.add();
  finish(now);
  w_.exact_wall_ns.set(clock_.now_ns() - wall_start);
  w_.finished.store(true);
}

// The calendar's invariant: an element with something to do has an entry
// no later than when it is due. Checked once at the end of every run (and
// after every element under SLUICE_EXACT_AUDIT); a breach is a rule that
// changed what an element will do without asking it again: counted,
// reported, and repaired so the run goes on.
void Worker::audit_calendar(uint64_t now) {
  Exact& x = *exact_;
  for (uint32_t id = 0; id < x.cal.elements(); ++id) {
    if (id < x.bfc_base && ports_[id]->owner_slot != w_.slot) continue;
    const uint64_t due = exact_due(id, now);
    if (due >= x.cal.due(id) || due >= rt_.end_ns) continue;
    if (w_.exact_missed.get() < 10) {
      std::fprintf(stderr,
                   "sluice: exact time: element %" PRIu32 " (%s) was due at %" PRIu64
                   " ns but its calendar entry said %" PRIu64 " (at %" PRIu64 " ns)\n",
                   id, id < x.bfc_base ? ports_[id]->cfg->name.c_str() : "timer", due,
                   x.cal.due(id), now);
    }
    w_.exact_missed.add();
    x.cal.set(id, due);
  }
}

void Worker::exact_handle(uint32_t id, uint64_t now) {
  Exact& x = *exact_;
  if (id < x.bfc_base) {
    PortRuntime& port = *ports_[id];
    poll_port(port, now);
    transmit(port, now);
    if (port.pfc_ingress) generate_pfc(port, now);
    if (port.tcd && port.tcd->next_due_ns() <= now) tcd_timer(port, now);
    send_arp_requests(port, now);
    // A dynamic XOFF threshold follows the switch's free buffer, which
    // this port's packets just changed.
    for (uint16_t p : pfc_dynamic_[port.switch_index]) exact_touch(p);
    return;
  }
  if (id < x.fg_base) return send_bfc_bitmaps_of(static_cast<uint16_t>(id - x.bfc_base), now);
  if (id < x.trace_id) {
    fg_timers_of(static_cast<uint16_t>(id - x.fg_base), now);
    return;
  }
  w_.queue_trace->sample(rt_, w_, now);
}

uint64_t Worker::exact_due(uint32_t id, uint64_t now) {
  const Exact& x = *exact_;
  if (id < x.bfc_base) return port_due(*ports_[id], now);
  if (id < x.fg_base) {
    const BitmapSchedule* s =
        w_.bfc_bitmaps.empty() ? nullptr : w_.bfc_bitmaps[id - x.bfc_base].get();
    return s == nullptr ? EventCalendar::kNever : std::max(s->next_due_ns(), now);
  }
  if (id < x.trace_id) return fg_due(static_cast<uint16_t>(id - x.fg_base), now);
  return w_.queue_trace ? std::max(w_.queue_trace->next_ns(), now) : EventCalendar::kNever;
}

// The earliest instant the port has something to do. Never before now: a
// rule that says "at once" is handled at this instant again.
uint64_t Worker::port_due(PortRuntime& port, uint64_t now) {
  uint64_t due = EventCalendar::kNever;
  switch (port.kind) {
    case PortKind::kLink:
      due = link_next_due(*port.link_in, port.link_stage);
      break;
    case PortKind::kPcap:
      due = port.pcap->next_rx_ns(now);
      break;
    case PortKind::kEthdev:  // refused in exact time (config_validate.cc)
      break;
  }
  if (port.tx_pending_count != 0) return now;
  uint64_t tx = port.tm->next_event_ns(now);
  if (tx != UINT64_MAX && port.link_out) tx = std::max(tx, port.link_out->timing.wire_free_ns());
  due = std::min(due, tx);
  if (port.pfc_ingress) due = std::min(due, port.pfc_ingress->next_refresh_ns());
  // TCD must see a pause end when it does, whether or not frames wait.
  if (port.tcd) due = std::min({due, port.tcd->next_due_ns(), port.tm->next_pause_end_ns(now)});
  if (!port.eth_header_ready && port.cfg->peer_ipv4 && port.cfg->ipv4)
    due = std::min(due, port.next_arp_request_ns);
  return due == EventCalendar::kNever ? due : std::max(due, now);
}

}  // namespace sluice
