// Exact fabric time (docs/testbed.md, "Exact fabric time"): the worker's
// loop when every port is a capture-file host or an internal link. Fabric
// time never reads the machine's clock. The calendar (lib/emulator/
// event_calendar.h) holds, for each element, the next instant it is due:
//   - a port: a frame arrives on its link or from its host, its host NIC
//     may send or takes a received frame into account, its traffic manager
//     may send (shaper, pause expiry, the link's wire free), its PFC XOFF
//     refresh, its TCD detector leaving undetermined, an ARP retry;
//   - per switch, BFC's bitmap refresh and Floodgate's credit and sync
//     timers; the queue trace's next sample;
//   - per Flowtune edge, its next held packet due and the first instant a
//     flowlet's idle gap runs out; Flowtune's allocator in the fabric (news
//     or a rate arriving over its control path, an iteration, a lease
//     pass).
// The loop takes the earliest element, handles it at that instant, and
// asks it, and every element it touched (a packet queued at another port,
// a frame put on a link, credit owed), when each is next due. Everything
// due at an instant is handled at that instant, so nothing is late; the
// clock then jumps to the next due instant, so idle time costs nothing;
// and only due elements are visited, so idle ports cost nothing.
// Elements due at one instant go in a fixed order: those that became due at
// that instant while another was handled (the ready list) in the order they
// did, then the calendar's in element id order. Nothing here depends on the
// machine, so a run repeats byte for byte.

#include <rte_cycles.h>
#include <rte_mempool.h>

#include <cinttypes>
#include <cstdio>
#include <cstdlib>

#include "switch/ports/internal_link.h"
#include "switch/path/worker.h"

namespace sluice {
namespace {

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
    exact_settle(id, kDueAll, now);
  }
  uint64_t events = 0, instants = 0;
  bool stuck = false;
  // SLUICE_EXACT_AUDIT=1 checks the calendar after every element (slow:
  // every element asked each time; for tests on small fabrics).
  const char* audit_env = std::getenv("SLUICE_EXACT_AUDIT");
  const bool audit = audit_env != nullptr && audit_env[0] == '1';
  for (;;) {
    uint32_t id;
    if (x.ready_head < x.ready.size()) {
      id = x.ready[x.ready_head++];
      x.in_ready[id] = 0;
    } else {
      x.ready.clear();
      x.ready_head = 0;
      const uint64_t t = x.cal.next_time();
      if (t >= rt_.end_ns) {  // nothing more before the end: the fabric idles to it
        if (rt_.end_ns != UINT64_MAX) now = rt_.end_ns;
        break;
      }
      // Left in place: handling files it again (exact_settle), and moving
      // the top down once is cheaper than a pop and a push.
      id = x.cal.next_element();
      if (t != now) {
        now = t;
        x.now = now;
        ++instants;
        x.at_instant = 0;
      }
    }
    if (++x.at_instant > kMaxEventsPerInstant) {
      // Which element keeps time from moving is a guess: the one due next
      // after that many handlings, of any elements, at one instant.
      std::fprintf(stderr,
                   "sluice: exact time: %" PRIu64 " elements handled at %" PRIu64
                   " ns without time moving on; the next due was element %" PRIu32
                   " (%s); stopping the run\n",
                   kMaxEventsPerInstant, now, id, exact_element_name(id));
      print_port_sides(id);
      stuck = true;
      break;
    }
    if (events % kPublishEvery == 0) {
      w_.clock_now_ns.set(now);
      if (rt_.stop.load(std::memory_order_relaxed)) break;
      // The pool's high-water mark, sampled (within kPublishEvery mbufs).
      const uint64_t used = rte_mempool_in_use_count(rt_.pool);
      if (used > w_.mbuf_peak_in_use.get()) w_.mbuf_peak_in_use.set(used);
    }
    exact_handle(id, now);
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

// An element in a diagnostic: its port's name, or "timer".
const char* Worker::exact_element_name(uint32_t id) const {
  return id < exact_->bfc_base ? ports_[id]->cfg->name.c_str() : "timer";
}

// A port element's three sides, as the calendar last knew them.
void Worker::print_port_sides(uint32_t id) const {
  if (id >= exact_->bfc_base) return;
  const PortDue& d = exact_->port[id];
  std::fprintf(stderr,
               "sluice: exact time: its sides were due rx %" PRIu64 " tx %" PRIu64 " misc %" PRIu64
               "; %u frames pending\n",
               d.rx, d.tx, d.misc, ports_[id]->tx_pending_count);
}

// The calendar's invariant: an element with something to do is due no
// later than it should be (an entry, or in the ready list at `now`).
// Checked once at the end of every run (and after every element under
// SLUICE_EXACT_AUDIT); a breach is a rule that changed what an element will
// do without asking it again: counted, reported, and repaired so the run
// goes on.
void Worker::audit_calendar(uint64_t now) {
  Exact& x = *exact_;
  for (uint32_t id = 0; id < x.cal.elements(); ++id) {
    if (id < x.bfc_base && ports_[id]->owner_slot != w_.slot) continue;
    const uint64_t due = exact_due(id, now);
    const uint64_t scheduled = x.in_ready[id] ? now : x.cal.due(id);
    if (due >= scheduled || due >= rt_.end_ns) continue;
    if (w_.exact_missed.get() < 10) {
      std::fprintf(stderr,
                   "sluice: exact time: element %" PRIu32 " (%s) was due at %" PRIu64
                   " ns but was scheduled for %" PRIu64 " (at %" PRIu64 " ns)\n",
                   id, exact_element_name(id), due, scheduled, now);
      print_port_sides(id);
    }
    w_.exact_missed.add();
    exact_settle(id, kDueAll, now);
  }
}

// Handles element `id` at `now`, then asks it and every element it
// touched when each is next due.
void Worker::exact_handle(uint32_t id, uint64_t now) {
  Exact& x = *exact_;
  if (id < x.bfc_base) {
    exact_handle_port(*ports_[id], now);
  } else {
    if (id < x.fg_base) {
      send_bfc_bitmaps_of(static_cast<uint16_t>(id - x.bfc_base), now);
    } else if (id < x.trace_id) {
      fg_timers_of(static_cast<uint16_t>(id - x.fg_base), now);
    } else if (id == x.trace_id) {
      w_.queue_trace->sample(rt_, w_, now);
    } else if (id < x.ft_allocator_id) {
      flowtune_edge_exact(*ft_edges_[id - x.ft_base], now);
    } else {
      flowtune_allocator_exact(now);
    }
    exact_touch(id, kDueAll);
  }
  for (size_t i = 0; i < x.touched.size(); ++i) {
    const uint32_t other = x.touched[i];
    const uint8_t what = x.dirty[other];
    x.dirty[other] = 0;
    exact_settle(other, what, now);
  }
  x.touched.clear();
}

// Each side of the port that is due: its arrivals, its wire, its timers.
// A side that ran is asked again, and so is what it reaches on this port:
// a frame sent to a capture host acts on its NIC (PAUSE, BFC, dstPause); a
// departure moves TCD's detectors. What a side does to other sides by rule
// (a PAUSE received holds this port's wire, PFC bytes counted against it,
// an ARP reply) touches them where it happens (touch, touch_misc).
void Worker::exact_handle_port(PortRuntime& port, uint64_t now) {
  const PortDue& d = exact_->port[port.index];
  uint8_t again = 0;
  if (d.rx <= now) {
    poll_port(port, now);
    again |= kDueRx;
    // TCD sees a pause or resume the instant it is received.
    if (port.tcd) {
      tcd_track_pauses(port, now);
      again |= kDueMisc;
    }
  }
  if (d.tx <= now) {
    transmit(port, now);
    again |= kDueTx;
    if (port.kind == PortKind::kPcap) again |= kDueRx;
    if (port.tcd) again |= kDueMisc;
  }
  if (d.misc <= now) {
    if (port.pfc_ingress) generate_pfc(port, now);
    if (port.tcd) {
      // A pause that expired with no frame waiting: TCD sees it end now.
      tcd_track_pauses(port, now);
      if (port.tcd->next_due_ns() <= now) tcd_timer(port, now);
    }
    send_arp_requests(port, now);
    again |= kDueMisc;
  }
  // A dynamic XOFF threshold follows the switch's free buffer, which this
  // port's packets just changed.
  if (again & (kDueRx | kDueTx)) {
    for (uint16_t p : pfc_dynamic_[port.switch_index]) exact_touch(p, kDueMisc);
  }
  exact_touch(port.index, again);
}

void Worker::exact_admitted(PortRuntime& out, uint64_t now) {
  // The switch's free buffer moved: dynamic XOFF thresholds with it (also
  // when a timer element, not a port, admitted the packet).
  for (uint16_t p : pfc_dynamic_[out.switch_index]) exact_touch(p, kDueMisc);
  // Already due now (it sends at this instant anyway), or busy until later.
  if (exact_->port[out.index].tx != EventCalendar::kNever || out.tx_pending_count != 0) {
    exact_touch(out.index, kDueTx);
    return;
  }
  const bool wire_free = out.link_out ? out.link_out->timing.wire_free_ns() <= now
                                      : out.tm->shaper().next_ready_ns() <= now;
  if (wire_free) {
    transmit(out, now);
    if (out.tcd) exact_touch(out.index, kDueMisc);
    if (out.kind == PortKind::kPcap) exact_touch(out.index, kDueRx);
  }
  exact_touch(out.index, kDueTx);
}

// Asks element `id` again for the sides in `what` and files it: in the
// ready list when it is due now, else in the calendar.
void Worker::exact_settle(uint32_t id, uint8_t what, uint64_t now) {
  Exact& x = *exact_;
  uint64_t due;
  if (id < x.bfc_base) {
    PortRuntime& port = *ports_[id];
    PortDue& d = x.port[id];
    if (what & kDueRx) d.rx = port_rx_due(port, now);
    if (what & kDueTx) d.tx = port_tx_due(port, now);
    if (what & kDueMisc) d.misc = port_misc_due(port, now);
    due = d.min();
  } else {
    due = exact_due(id, now);
  }
  exact_schedule(id, due);
}

void Worker::exact_schedule(uint32_t id, uint64_t due) {
  Exact& x = *exact_;
  if (due > x.now) {
    x.cal.set(id, due);
    return;
  }
  if (x.in_ready[id]) return;
  x.in_ready[id] = 1;
  x.ready.push_back(id);
  x.cal.remove(id);
}

// When element `id` is next due, every side of it asked afresh.
uint64_t Worker::exact_due(uint32_t id, uint64_t now) {
  const Exact& x = *exact_;
  if (id < x.bfc_base) {
    PortRuntime& port = *ports_[id];
    return std::min({port_rx_due(port, now), port_tx_due(port, now), port_misc_due(port, now)});
  }
  if (id < x.fg_base) {
    const BitmapSchedule* s =
        w_.bfc_bitmaps.empty() ? nullptr : w_.bfc_bitmaps[id - x.bfc_base].get();
    return s == nullptr ? EventCalendar::kNever : std::max(s->next_due_ns(), now);
  }
  if (id < x.trace_id) return fg_due(static_cast<uint16_t>(id - x.fg_base), now);
  if (id == x.trace_id)
    return w_.queue_trace ? std::max(w_.queue_trace->next_ns(), now) : EventCalendar::kNever;
  if (id < x.ft_allocator_id) return flowtune_edge_due(*ft_edges_[id - x.ft_base], now);
  if (!rt_.flowtune_allocator) return EventCalendar::kNever;
  const uint64_t due = rt_.flowtune_allocator->next_due_ns();
  return due == EventCalendar::kNever ? due : std::max(due, now);
}

// A port's three sides. Never before now: a rule that says "at once" is
// handled at this instant again.
uint64_t Worker::port_rx_due(PortRuntime& port, uint64_t now) {
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
  return due == EventCalendar::kNever ? due : std::max(due, now);
}

uint64_t Worker::port_tx_due(const PortRuntime& port, uint64_t now) const {
  if (port.tx_pending_count != 0) return now;
  uint64_t due = port.tm->next_event_ns(now);
  if (due != UINT64_MAX && port.link_out) due = std::max(due, port.link_out->timing.wire_free_ns());
  return due;
}

uint64_t Worker::port_misc_due(const PortRuntime& port, uint64_t now) const {
  uint64_t due = EventCalendar::kNever;
  if (port.pfc_ingress) {
    // Bytes counted against this ingress, or freed, may owe the peer an
    // XOFF or XON now (a touch_misc() asks).
    PfcDecision d;
    due = pfc_decision(port, now, &d) ? std::max(now, port.pfc_retry_ns)
                                      : port.pfc_ingress->next_refresh_ns();
  }
  // TCD must see a pause end when it does, whether or not frames wait.
  if (port.tcd) due = std::min({due, port.tcd->next_due_ns(), port.tm->next_pause_end_ns(now)});
  if (!port.eth_header_ready && port.cfg->peer_ipv4 && port.cfg->ipv4)
    due = std::min(due, port.next_arp_request_ns);
  return due == EventCalendar::kNever ? due : std::max(due, now);
}

}  // namespace sluice
