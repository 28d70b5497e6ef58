#pragma once
// A port as an element of the emulator's calendar (fabric_loop.h). It keeps
// three due times, one per part, so that what touches one part of it (a
// packet queued for its wire, PFC bytes counted against it) asks only that
// part again:
//   - arrivals (kRx): a frame arrives on its link or from its host; the
//     host's NIC acts (sends, or takes a frame sent toward the host);
//   - wire (kTx): its traffic manager may send (the shaper, a pause's end,
//     the link's wire free);
//   - timers (kMisc): the modules' port timers (PFC's XOFF refresh, TCD
//     leaving undetermined) and an ARP retry.

#include <algorithm>
#include <cstdint>

#include "lib/emulator/calendar_element.h"
#include "switch/emulator/fabric_loop.h"
#include "switch/emulator/port_lines.h"
#include "switch/runtime/runtime.h"

namespace sluice {

class Worker;

class PortElement final : public CalendarElement {
 public:
  PortElement(Worker& w, PortRuntime& port);

  // Inline: the loop asks a port again after nearly every element it
  // handles, and calls it directly (the class is final).
  uint64_t due(uint64_t now, uint8_t parts) override {
    if (parts & FabricLoop::kRx) {
      rx_ = rx_due(now);
      if (lines_ != nullptr) lines_->frame = port_.medium->next_frame(&lines_->rx_state);
    }
    if (parts & FabricLoop::kTx) tx_ = wire_due(now);
    if (parts & FabricLoop::kMisc) misc_ = misc_due(now);
    return earliest();
  }
  uint64_t due_fresh(uint64_t now) override;
  uint8_t run(uint64_t now) override;
  // The loop's line for this port (port_lines.h): due() and lower_rx()
  // keep its next frame current.
  void set_lines(PortLines* lines) { lines_ = lines; }
  const char* name() const override;
  void describe(char* out, unsigned size) const override;

  // The wire's part as last asked (kNever: idle).
  uint64_t tx_due() const { return tx_; }
  // A frame reaches the port at `due`: true when that is earlier than its
  // arrivals' part was due (the calendar must move it up).
  bool lower_rx(uint64_t due, const rte_mbuf* frame) {
    if (due >= rx_) return false;
    rx_ = due;
    if (lines_ != nullptr) lines_->frame = frame;
    return true;
  }
  uint64_t earliest() const { return std::min({rx_, tx_, misc_}); }

 private:
  // Never before now: a rule that says "at once" is handled at this
  // instant again.
  uint64_t rx_due(uint64_t now) {
    const uint64_t due = port_.medium->next_rx_ns(now);
    return due == kNever ? due : std::max(due, now);
  }
  uint64_t wire_due(uint64_t now) const {
    if (port_.tx_pending_count != 0) return now;
    uint64_t due = port_.tm->next_event_ns(now);
    if (due != UINT64_MAX && port_.link_out != nullptr)
      due = std::max(due, port_.link_out->timing.wire_free_ns());
    return due;
  }
  uint64_t misc_due(uint64_t now);

  Worker& w_;
  PortRuntime& port_;
  uint64_t rx_ = kNever, tx_ = kNever, misc_ = kNever;
  PortLines* lines_ = nullptr;
};

}  // namespace sluice
