#pragma once
// The Floodgate state of one switch that admission, credit intake and
// departure toward switch-facing ports share (SPEC 4.1; "Floodgate: Taming
// Incast in Datacenter Networks", sections 2-3, 5.3-5.4): the
// per-destination windows, the VOQ pool charged to the shared buffer, the
// dstPause counts of the host ports, and the loss-recovery counters.
// Credits earned at departure are not here: every lcore aggregates its own
// (credit_aggregator.h).
//
// One writer: the lcore that owns the switch's switch-facing ports (the
// configuration keeps them on one; docs/mechanisms/floodgate.md, "One
// writer"). Time is an argument; no allocation after construction.
//
// Ports are numbered densely by the caller: switch-facing ports 0..n-1 for
// the sync counters, host ports 0..m-1 for dstPause.

#include <cstdint>
#include <optional>

#include "lib/common/drop_reason.h"
#include "lib/common/relaxed_counter.h"
#include "lib/mechanisms/floodgate/dst_pause_tracker.h"
#include "lib/mechanisms/floodgate/dst_windows.h"
#include "lib/mechanisms/floodgate/sync_state.h"
#include "lib/mechanisms/floodgate/voq_pool.h"
#include "lib/tm/shared_buffer.h"

namespace sluice {

struct FloodgateSwitchConfig {
  uint32_t max_destinations = 4096;
  uint32_t voqs = 100;
  uint32_t voq_packets = 65536;
  uint64_t delay_credit_bytes = 0;  // withhold credit for dst above this many VOQ bytes; 0: off
  uint64_t voq_ecn_bytes = 0;       // mark CE entering a VOQ above this; 0: off
  bool dst_pause = false;
  uint64_t dst_pause_bytes = 0;  // per (host port, dst) still in the switch
  uint64_t dst_pause_hysteresis_bytes = 3072;
  bool sync = false;
  uint64_t sync_cut_ns = 0;  // SyncReceiver's cut (>= the hop RTT, control frames included)
};

inline constexpr uint32_t kNotHostPort = UINT32_MAX;

// A data packet toward a switch-facing egress port.
struct FgPacket {
  uint64_t handle = 0;
  uint32_t dst = 0;                 // IPv4, host order
  uint32_t bytes = 0;               // as both ends of the link count it
  uint16_t egress = 0;              // the caller's egress port
  uint32_t initial = 0;             // the egress port's initial window (a new destination's)
  uint32_t host_in = kNotHostPort;  // dense host port it came in on, for dstPause
  bool ecn_capable = false;
};

enum class FgVerdict : uint8_t {
  kSend,          // the window allowed it and was debited: on to the egress queue
  kUncontrolled,  // no window (the table is full): on to the egress queue, counted
  kHeld,          // waits in its destination's VOQ
  kHeldMarked,    // the same, and to be marked CE (voq_ecn)
  kRefused,       // dropped: `reason`
};

struct FgAdmission {
  FgVerdict verdict = FgVerdict::kSend;
  DropReason reason = DropReason::kCount;        // kRefused: voq_full
  DstPauseSignal pause = DstPauseSignal::kNone;  // to send to the packet's host port for dst
};

class FloodgateSwitch {
 public:
  // buffer: the shared buffer VOQ bytes are charged to (outlives this).
  FloodgateSwitch(const FloodgateSwitchConfig& cfg, SharedBuffer* buffer);

  // Admission step 1 (SPEC 4.1 "Admission"). Nothing of dst may overtake
  // what already waits for it, so a packet goes straight on only when dst's
  // VOQ is empty and its window holds the packet. Inline: every packet
  // toward a switch-facing port takes it.
  FgAdmission admit(const FgPacket& p) {
    DstWindow* w = windows_.find_or_add(p.dst, p.initial);
    if (w == nullptr) [[unlikely]]
      return admit_without_window(p);
    if (!windows_.may_send(*w, p.bytes)) return hold(*w, p);
    windows_.debit(*w, p.bytes);
    return {FgVerdict::kSend, DropReason::kCount, enter(p)};
  }
  // A packet admit() sent (kSend) was refused by the egress queue, or was
  // dropped later in this switch: its window gets the bytes back.
  void refund(uint32_t dst, uint32_t bytes) { windows_.credit(dst, bytes); }
  // Credit from the downstream of switch-facing port `port`: the window of
  // dst rises (never above its initial value; the rest is counted invalid).
  // Inline: a credit frame brings one entry per destination, and at many
  // destinations that is about one per data packet.
  void credit(uint32_t port, uint32_t dst, uint32_t bytes) {
    credit_bytes.add(bytes);
    if (sync_sender_) sync_sender_->on_credit(port, dst, bytes);
    windows_.credit(dst, bytes);
  }
  // VOQ packets whose windows allow now, round-robin, at most `budget`:
  // each leaves the VOQ (its buffer charge released) and goes to
  // send(const VoqPacket&). Returns how many.
  template <class Send>
  unsigned drain(unsigned budget, Send&& send);
  // Everything still held, whatever the windows (at stop).
  template <class Fn>
  void discard(Fn&& fn) {
    voqs_.discard([&](const VoqPacket& p) {
      buffer_->release(p.bytes);
      fn(p);
    });
  }
  // A packet admit() counted for host port host_in (not kRefused) left the
  // switch (transmitted or dropped).
  DstPauseSignal left(uint32_t host_in, uint32_t dst, uint32_t bytes) {
    if (!cfg_.dst_pause || host_in == kNotHostPort) return DstPauseSignal::kNone;
    return dst_pause_->on_leave(host_in, dst, bytes);
  }
  // delayCredit: credit for dst is held back while its VOQ holds too much.
  bool withhold(uint32_t dst) const;
  // Whether withhold() may hold anything back now (delayCredit on, and
  // some VOQ holds packets); when not, no destination needs looking up.
  bool may_withhold() const { return cfg_.delay_credit_bytes != 0 && voqs_.packets() != 0; }

  const FloodgateSwitchConfig& config() const { return cfg_; }
  DstWindows& windows() { return windows_; }
  const DstWindows& windows() const { return windows_; }
  const VoqPool& voqs() const { return voqs_; }
  const DstPauseTracker* dst_pause() const { return dst_pause_ ? &*dst_pause_ : nullptr; }
  SyncSender* sync_sender() { return sync_sender_ ? &*sync_sender_ : nullptr; }
  SyncReceiver* sync_receiver() { return sync_receiver_ ? &*sync_receiver_ : nullptr; }
  const SyncSender* sync_sender() const { return sync_sender_ ? &*sync_sender_ : nullptr; }
  const SyncReceiver* sync_receiver() const { return sync_receiver_ ? &*sync_receiver_ : nullptr; }

  RelaxedCounter held_packets;          // packets that waited in a VOQ
  RelaxedCounter peak_voq_bytes;        // the most all VOQs held together
  RelaxedCounter uncontrolled_packets;  // sent without a window (table full)
  RelaxedCounter voq_marks;             // CE marks entering a VOQ (voq_ecn)
  RelaxedCounter credit_bytes;          // credit received (valid or not)

 private:
  FgAdmission hold(DstWindow& w, const FgPacket& p);
  FgAdmission admit_without_window(const FgPacket& p);
  DstPauseSignal enter(const FgPacket& p) {
    if (!cfg_.dst_pause || p.host_in == kNotHostPort) return DstPauseSignal::kNone;
    return dst_pause_->on_enter(p.host_in, p.dst, p.bytes);
  }

  FloodgateSwitchConfig cfg_;
  SharedBuffer* buffer_;
  DstWindows windows_;
  VoqPool voqs_;
  std::optional<DstPauseTracker> dst_pause_;
  std::optional<SyncSender> sync_sender_;
  std::optional<SyncReceiver> sync_receiver_;
};

template <class Send>
unsigned FloodgateSwitch::drain(unsigned budget, Send&& send) {
  if (voqs_.packets() == 0) return 0;
  return voqs_.drain(windows_, budget, [&](const VoqPacket& p) {
    buffer_->release(p.bytes);
    send(p);
  });
}

}  // namespace sluice
