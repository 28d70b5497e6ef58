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
#include "lib/tm/egress_port.h"

namespace sluice {

class Worker;
struct PortRuntime;

class PortElement final : public CalendarElement {
 public:
  PortElement(Worker& w, PortRuntime& port);

  uint64_t due(uint64_t now, uint8_t parts) override;
  uint64_t due_fresh(uint64_t now) override;
  uint8_t run(uint64_t now) override;
  void prefetch() const override {
    for (unsigned i = 0; i < hot_count_; ++i) __builtin_prefetch(hot_[i]);
  }
  const char* name() const override;
  void describe(char* out, unsigned size) const override;

  // The wire's part as last asked (kNever: idle).
  uint64_t tx_due() const { return tx_; }
  // A frame reaches the port at `due`: true when that is earlier than its
  // arrivals' part was due (the calendar must move it up).
  bool lower_rx(uint64_t due) {
    if (due >= rx_) return false;
    rx_ = due;
    return true;
  }
  uint64_t earliest() const { return std::min({rx_, tx_, misc_}); }

 private:
  uint64_t rx_due(uint64_t now);
  uint64_t wire_due(uint64_t now) const;
  uint64_t misc_due(uint64_t now);

  Worker& w_;
  PortRuntime& port_;
  uint64_t rx_ = kNever, tx_ = kNever, misc_ = kNever;
  // What handling the port touches first, each a cache line: the port's
  // runtime (4), its traffic manager's first lines, its counters (1), its
  // medium (1) and its link's two directions (3).
  static constexpr unsigned kHot = 4 + EgressPort::kHotLines + 1 + 1 + 3;
  const void* hot_[kHot];
  unsigned hot_count_ = 0;
};

}  // namespace sluice
