#pragma once
// The emulator's loop in fabric time (docs/emulator.md): a worker lcore's
// loop when every port is an emulated host or an internal link. Fabric
// time never reads the machine's clock. The calendar (lib/emulator/
// wheel_calendar.h) holds, for each element (lib/emulator/calendar_element.h),
// the next instant it is due:
//   - a port (port_element.h): a frame arrives on its link or from its
//     host, its host's NIC may send or takes a received frame into account,
//     its traffic manager may send, its timers (PFC refresh, TCD, ARP);
//   - each module's own elements (switch/path/module.h: elements()), e.g.
//     BFC's bitmap refresh, Floodgate's credit and sync timers, the queue
//     trace, Flowtune's edges and its allocator in the fabric.
// The loop takes the earliest element, handles it at that instant, and
// asks it, and every element it touched (a packet queued at another port,
// a frame put on a link, credit owed), when each is next due. Everything
// due at an instant is handled at that instant, so nothing is late; the
// clock then jumps to the next due instant, so idle time costs nothing;
// and only due elements are visited, so idle ports cost nothing.
//
// Order at one instant: elements that became due at that instant while
// another was handled (the ready list) in the order they did, then the
// calendar's in element order: the ports by global index, then each
// module's elements in the registry's order (switch/mechanisms/registry.h),
// each module's in the order it added them. Nothing here depends on the
// machine or on where elements are stored, so a run repeats byte for byte.
//
// On several worker lcores (window_sync.h) each runs a FabricLoop over its
// own switches' elements, window by window; elements of two lcores never
// act on each other within a window, so the order above, kept on each, is
// the single lcore's run.

#include <cstdint>
#include <memory>
#include <vector>

#include "lib/emulator/calendar_element.h"
#include "lib/emulator/wheel_calendar.h"
#include "switch/emulator/port_lines.h"

namespace sluice {

class Worker;
class PortElement;
struct PortRuntime;

class FabricLoop {
 public:
  // A port's parts (PortElement): its arrivals, its wire, its timers.
  static constexpr uint8_t kRx = 1;
  static constexpr uint8_t kTx = 2;
  static constexpr uint8_t kMisc = 4;
  static constexpr uint8_t kAll = CalendarElement::kAllParts;

  // Elements for the ports `w` owns, then each module's (in the registry's
  // order).
  explicit FabricLoop(Worker& w);
  ~FabricLoop();

  // Adds an element after those already there (its place in the order at
  // one instant); returns its id. Before run() only.
  uint32_t add(std::unique_ptr<CalendarElement> e);

  // Handles elements from the run's start until its end (or a stop).
  void run();

  uint64_t now() const { return now_; }
  // Something changed what element `id` will do next (the parts in `what`):
  // it is asked again once the element being handled is done.
  void touch(uint32_t id, uint8_t what) {
    if (dirty_[id] == 0) touched_.push_back(id);
    dirty_[id] |= what;
  }
  // A frame put on a link reaches port `rx` at `due`.
  void link_arrival(uint16_t rx, uint64_t due, const rte_mbuf* frame);
  // A packet was queued at `out`: an idle port whose wire is free starts
  // sending it at once (what the calendar would do at this instant, less a
  // visit); either way its wire's part is asked again.
  void admitted(PortRuntime& out, uint64_t now);
  // Whether a packet queued now at `out` would be sent at this instant:
  // the port is idle (nothing due on its wire, nothing pending) and its
  // wire is free.
  bool sends_at_once(const PortRuntime& out, uint64_t now) const;
  // admitted() for a packet the traffic manager passed straight through
  // (sends_at_once() held): it is sent now.
  void passed(PortRuntime& out, rte_mbuf* m, uint64_t now);
  // A packet is about to be admitted to port `index` (global): ask for
  // its memory (port_lines.h).
  void prefetch_port(uint16_t index) const;

 private:
  void handle(uint32_t id, uint64_t now);
  void settle(uint32_t id, uint8_t what, uint64_t now);
  void schedule(uint32_t id, uint64_t due);
  void audit(uint64_t now);
  void report_stuck(uint32_t id, uint64_t now) const;
  void take_arrivals(uint64_t now);
  void set_port_lines();
  void after_send(PortRuntime& out);
  void modules_admitted(PortRuntime& out);

  Worker& w_;
  WheelCalendar cal_;
  std::vector<CalendarElement*> elements_;  // by id; nullptr: a port another lcore owns
  std::vector<PortElement*> ports_;         // by global port index (nullptr: not ours)
  uint32_t port_count_ = 0;                 // ports_.size(), and lines_'s
  // By global port index: what handling each of ours touches first.
  std::vector<PortLines> lines_;
  uint32_t frame_data_ = 0;  // a frame's data from its mbuf, unless a hop moved it
  PassLines pass_lines_;     // in each port's traffic manager
  std::vector<std::unique_ptr<CalendarElement>> owned_;
  uint64_t now_ = 0;
  uint64_t at_instant_ = 0;  // elements handled at now_ so far
  // Elements whose due time something changed while another was handled
  // (parts): asked again once that element is done. (uint16_t, not a char
  // type: a char store may alias anything, so the compiler would load again
  // what it kept in registers across it.)
  std::vector<uint16_t> dirty_;
  std::vector<uint32_t> touched_;
  // Elements due at `now` that became due while it was handled: taken in
  // the order they became due, before the calendar's next entry. (A packet
  // queued at an idle port makes it due at once: no heap visit.)
  std::vector<uint32_t> ready_;
  size_t ready_head_ = 0;
  std::vector<uint16_t> in_ready_;  // not a char type, as dirty_
  // Several lcores: this one's ports whose link another lcore sends into
  // (and by port, whether it is one), and the current window's end.
  std::vector<uint16_t> cross_in_;
  std::vector<uint8_t> cross_in_mask_;
  uint64_t limit_ = UINT64_MAX;
};

}  // namespace sluice
