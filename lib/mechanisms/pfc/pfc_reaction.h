#pragma once
// What a port does with the PFC / PAUSE frames it receives (IEEE 802.1Q
// clause 36, 802.3 Annex 31B / 31D): each honoured class c pauses the data
// queues of class c on this port's EgressPort for quanta_to_ns(quanta[c]) from
// now, a newer frame replaces the end time, zero quanta resumes at once; a
// PAUSE does the same to the whole port. Time spent paused is accounted per
// priority from the pause intervals. docs/mechanisms/pfc.md gives the rules.
//
// Single writer: the lcore that owns the port. Time is always an argument.

#include <cstdint>

#include "lib/common/relaxed_counter.h"
#include "lib/mechanisms/pfc/pause_frame.h"
#include "lib/mechanisms/pfc/pause_quanta.h"
#include "lib/mechanisms/pfc/pfc_classes.h"
#include "lib/mechanisms/pfc/pfc_mode.h"
#include "lib/tm/egress_port.h"

namespace sluice {

struct PfcReactionConfig {
  PfcMode mode = PfcMode::kPfc;
  uint8_t priorities = 0xFF;  // PFC classes this port honours
  uint64_t rate_bps = 0;      // this port's link rate (> 0): quanta -> ns
  ClassQueueMasks class_queues = default_class_queues(32);
};

// Index kAllPriorities is the 802.3x PAUSE (whole port).
struct PfcRxStats {
  RelaxedCounter frames_received;       // valid PFC / PAUSE frames, honoured or not
  RelaxedCounter received[kPfcSlots];   // frames that acted on this priority
  RelaxedCounter invalid;               // short body or unknown opcode
  RelaxedCounter ignored;               // kind not enabled on the port (PAUSE in pfc mode, ...)
  RelaxedCounter paused_ns[kPfcSlots];  // settled paused time, see settle()
};

class PfcReaction {
 public:
  // Throws std::invalid_argument for rate 0 in an active mode.
  explicit PfcReaction(const PfcReactionConfig& cfg);
  PfcReaction(const PfcReaction&) = delete;
  PfcReaction& operator=(const PfcReaction&) = delete;

  // Parses the body after the 0x8808 type and applies it. False (counted as
  // invalid) when parse_mac_control refuses it.
  bool receive(const uint8_t* body, uint32_t len, uint64_t now_ns, EgressPort* port);
  void apply(const MacControlFrame& f, uint64_t now_ns, EgressPort* port);

  // Slot 0..7 or kAllPriorities. Exact total time paused up to now_ns (not
  // earlier than the last frame applied: time never goes backwards).
  uint64_t paused_ns(uint32_t slot, uint64_t now_ns) const;
  bool paused(uint32_t slot, uint64_t now_ns) const {
    const Interval& iv = iv_[slot];
    return iv.open && now_ns >= iv.start_ns && now_ns < iv.until_ns;
  }
  // Folds the paused time up to now_ns into stats().paused_ns, which a
  // scraper may read (monotonic). Call it from the owner's timer loop.
  void settle(uint64_t now_ns);
  const PfcRxStats& stats() const { return stats_; }

 private:
  // One pause interval [start, until), open until it expires or is resumed;
  // closed time lives in stats_.paused_ns[slot].
  struct Interval {
    bool open = false;
    uint64_t start_ns = 0;
    uint64_t until_ns = 0;
  };
  void close_expired(uint32_t slot, uint64_t now_ns);
  // Records quanta received for slot; returns the new end time (0: resumed).
  uint64_t update(uint32_t slot, uint16_t quanta, uint64_t now_ns);
  void apply_pfc(const MacControlFrame& f, uint64_t now_ns, EgressPort* port);
  void sync_queues(uint64_t queues, uint64_t now_ns, EgressPort* port) const;

  PfcReactionConfig cfg_;
  Interval iv_[kPfcSlots];
  PfcRxStats stats_;
};

}  // namespace sluice
