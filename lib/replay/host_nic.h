#pragma once
// The sending side of an emulated host NIC behind a replaying capture port.
// A real NIC never puts frames on its link faster than the link's rate, and it
// stops sending while its peer has paused it with 802.3x PAUSE or PFC.
//
// Pacing: the next frame, due at `due`, may start at
//   start = max(due, wire_free, end of the last pause taken into account)
// and then occupies the wire for (bytes + overhead) * 8 / rate. wire_free is
// kept exactly (in ns x bps), so the long-run rate is exact; start is rounded
// up to the nanosecond, so a frame never starts early.
//
// Pause: pause(at, length) records a PAUSE/PFC frame the host receives at `at`
// (length 0: resume). Received frames take effect in time order when poll()
// reaches their time, so a frame stamped in the future (e.g. a transmit
// departure time) does not stop sending before it arrives. A frame received
// while a pause is running replaces its end time (the standard's timer
// restart); a frame stamped before the last poll counts as received then.
// The host acts at poll instants: paused at `now` means it sends nothing.
//
// Rate 0 disables the model: no pacing, pauses ignored. Time is always an
// argument (ns); no allocation.

#include <array>
#include <cstdint>
#include <optional>

namespace sluice {

class HostNic {
 public:
  HostNic() = default;  // rate 0: transparent
  HostNic(uint64_t rate_bps, uint32_t overhead_bytes)
      : rate_bps_(rate_bps), overhead_bytes_(overhead_bytes) {}

  bool enabled() const { return rate_bps_ != 0; }
  uint64_t rate_bps() const { return rate_bps_; }

  // A PAUSE/PFC frame asking for pause_ns (0: resume now) reaches the host at at_ns.
  void pause(uint64_t at_ns, uint64_t pause_ns);
  // Takes every received frame up to now_ns into account (now_ns never
  // decreases between calls). True if the host may send at now_ns.
  bool poll(uint64_t now_ns);
  // Earliest start of the next frame, due at due_ns (after a poll).
  uint64_t start_ns(uint64_t due_ns) const;
  // The next frame, of `bytes`, started at start_ns (as given by start_ns()).
  void sent(uint64_t start_ns, uint32_t bytes);

  // Total time paused up to now_ns (>= the last poll), from the pause
  // intervals: an interval opens at a frame with nonzero length and closes at
  // its end time or at a resume, whichever comes first.
  uint64_t paused_ns(uint64_t now_ns) const;
  bool paused_at(uint64_t now_ns) const { return open_ && start_ns_ <= now_ns && now_ns < end_ns_; }

 private:
  struct Event {
    uint64_t at_ns;
    uint64_t pause_ns;
  };
  static constexpr uint32_t kMaxPending = 16;  // received, not yet reached by a poll

  void apply(const Event& e);
  void apply_oldest();
  uint64_t wire_free_ns() const;  // rounded up

  uint64_t rate_bps_ = 0;
  uint32_t overhead_bytes_ = 0;
  unsigned __int128 wire_free_ = 0;  // ns x bps: when the wire finishes its last frame
  // The current (or last) pause interval [start, end) and the closed ones' total.
  bool open_ = false;
  uint64_t start_ns_ = 0;
  uint64_t end_ns_ = 0;
  uint64_t closed_ns_ = 0;
  uint64_t polled_ns_ = 0;  // the latest poll
  std::array<Event, kMaxPending> pending_{};
  uint32_t head_ = 0;
  uint32_t count_ = 0;
};

// What a frame sent toward the host asks of it: the pause length in ns (0:
// resume) if it is an untagged MAC Control frame to 01:80:C2:00:00:01 (type
// 0x8808 at offset 12) that parse_mac_control() accepts, nullopt otherwise.
// PAUSE: quanta_to_ns(pause_time, rate). PFC, simplified (the host's frames
// are not classified): the longest time among the enabled classes, so the
// frame pauses the host if any enabled class has nonzero quanta and resumes
// it when all are 0; a PFC frame with no class enabled is nullopt.
// rate_bps > 0.
std::optional<uint64_t> host_pause_ns(const uint8_t* frame, uint32_t len, uint64_t rate_bps);

}  // namespace sluice
