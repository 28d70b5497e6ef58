#pragma once
// PFC / PAUSE generation for one ingress port (IEEE 802.1Q clause 36, 802.3
// Annex 31B): bytes that arrived on this port and still sit in the switch's
// buffer are counted per priority; above the XOFF threshold the port asks
// its upstream to pause that priority, at or below threshold - hysteresis it
// asks it to resume, and while paused it refreshes the request when half the
// requested pause time has passed. docs/mechanisms/pfc.md gives the rules.
//
// The caller owns the clock (now_ns) and the free-buffer figure, and sends
// the frames: poll() says whether a frame is due and what it carries,
// on_sent() records that it went out (a frame that could not be queued is
// simply asked for again at the next poll).

#include <array>
#include <cstdint>

#include "lib/common/relaxed_counter.h"
#include "lib/config/config.h"
#include "lib/mechanisms/pfc/pause_frame.h"
#include "lib/mechanisms/pfc/pause_quanta.h"
#include "lib/mechanisms/pfc/pfc_mode.h"

namespace sluice {

struct PfcIngressConfig {
  PfcMode mode = PfcMode::kPfc;
  uint8_t priorities = 0xFF;  // PFC: priorities that may be paused (lossless)
  uint64_t xoff_bytes = 0;    // static threshold, used when dynamic_alpha == 0
  double dynamic_alpha = 0;   // > 0: threshold = alpha x free buffer bytes
  uint64_t hysteresis_bytes = 0;
  uint16_t xoff_quanta = kMaxQuanta;  // pause time asked for by an XOFF
  uint64_t rate_bps = 0;              // this port's link rate (> 0): quanta <-> ns
  // Per priority, bytes below reserve count against neither the threshold
  // nor the pool. With headroom > 0, bytes that arrive while the priority
  // is above its threshold are headroom: out of the pool, and the priority
  // stays in XOFF until they have left (the public simulators' MMU).
  uint64_t reserve_bytes = 0;
  uint64_t headroom_bytes = 0;
};

// What a switch's ingresses hold outside the shared pool: bytes within
// their reserves and bytes in their headroom. One per (lcore shard, switch).
struct PfcPoolUse {
  RelaxedCounter reserved;
  RelaxedCounter headroom;
};

// The free pool a dynamic threshold follows: the buffer less what the
// ports set aside (headroom and reserve) and less the bytes in the shared
// part (in use, outside reserves and headroom). Floored at 0. With nothing
// set aside and nothing reserved it is the free buffer.
constexpr uint64_t pfc_pool_free(uint64_t capacity, uint64_t set_aside, uint64_t used,
                                 uint64_t reserved, uint64_t headroom) {
  const uint64_t outside = reserved + headroom;
  const uint64_t shared = used > outside ? used - outside : 0;
  const uint64_t taken = set_aside + shared;
  return capacity > taken ? capacity - taken : 0;
}

// Two maximum-size frames as sluice counts them (MTU + Ethernet header, no FCS).
constexpr uint64_t default_pfc_hysteresis_bytes(uint32_t mtu) { return 2ull * (mtu + 14); }

// Bytes that may still arrive on an ingress after its XOFF decision (the
// headroom a lossless priority needs above the XOFF threshold): the frame
// being sent toward the upstream when the XOFF is queued, the XOFF itself,
// both propagation delays, both ends' software reaction time (poll interval
// here, loop latency upstream) at line rate, and what the upstream had
// already committed to the link (its shaper burst, at least one frame).
constexpr uint64_t pfc_headroom_bytes(uint64_t rate_bps, uint64_t one_way_delay_ns,
                                      uint64_t reaction_ns, uint32_t max_frame_bytes,
                                      uint64_t sender_committed_bytes,
                                      uint32_t wire_overhead_bytes = 24) {
  const uint64_t ns = 2 * one_way_delay_ns + reaction_ns;
  const uint64_t in_flight = static_cast<uint64_t>(
      (static_cast<unsigned __int128>(ns) * rate_bps + 7'999'999'999ull) / 8'000'000'000ull);
  const uint64_t committed =
      sender_committed_bytes > max_frame_bytes ? sender_committed_bytes : max_frame_bytes;
  return in_flight + (max_frame_bytes + wire_overhead_bytes) +
         (kMacControlFrameLen + wire_overhead_bytes) + committed;
}

// What a due frame carries. PAUSE: quanta[0]. PFC: the classes in
// class_enable with their quanta (0 = XON).
struct PfcDecision {
  bool pause = false;
  uint8_t class_enable = 0;
  std::array<uint16_t, kPfcClasses> quanta{};
};

// The 60-byte PAUSE or PFC frame for a decision; 0 when cap < 60.
uint32_t build_decision_frame(const PfcDecision& d, uint8_t* out, uint32_t cap, const MacAddr& src);

// Per-priority bytes in the buffer that came in on one ingress port: those
// counted against the threshold (reserve included) and those in headroom.
// One writer (the lcore that enqueues and dequeues them); several writers
// keep one each and the deciding lcore sums them (reads are safe).
class PfcIngressBytes {
 public:
  // Without reserve or headroom accounting.
  void on_enqueue(uint8_t prio, uint32_t bytes) { bytes_[prio & 7].add(bytes); }
  void on_dequeue(uint8_t prio, uint32_t bytes) { bytes_[prio & 7].sub(bytes); }
  // With them: a packet that takes the priority's shared part above
  // `threshold` goes to headroom (threshold UINT64_MAX: never); what is
  // within `reserve` is counted in pool.reserved. A departure leaves
  // headroom first, then the shared part, the reserve last.
  void on_enqueue(uint8_t prio, uint32_t bytes, uint64_t reserve, uint64_t threshold,
                  PfcPoolUse& pool);
  void on_dequeue(uint8_t prio, uint32_t bytes, uint64_t reserve, PfcPoolUse& pool);
  uint64_t bytes(uint8_t prio) const { return bytes_[prio & 7].get(); }
  uint64_t headroom(uint8_t prio) const { return headroom_[prio & 7].get(); }
  std::array<uint64_t, kPfcClasses> snapshot() const {
    std::array<uint64_t, kPfcClasses> s;
    for (uint32_t c = 0; c < kPfcClasses; ++c) s[c] = bytes_[c].get();
    return s;
  }

 private:
  RelaxedCounter bytes_[kPfcClasses];
  RelaxedCounter headroom_[kPfcClasses];
};

// Index kAllPriorities counts 802.3x PAUSE frames and transitions.
struct PfcTxStats {
  RelaxedCounter frames_sent;      // PFC or PAUSE frames
  RelaxedCounter sent[kPfcSlots];  // frames carrying this priority (XOFF or XON)
  RelaxedCounter xoff[kPfcSlots];  // XON -> XOFF transitions
  RelaxedCounter xon[kPfcSlots];   // XOFF -> XON transitions
};

class PfcIngress {
 public:
  // Throws std::invalid_argument for rate 0, xoff_quanta 0, a negative or
  // non-finite alpha, or a static threshold of 0 in an active mode.
  explicit PfcIngress(const PfcIngressConfig& cfg);
  PfcIngress(const PfcIngress&) = delete;
  PfcIngress& operator=(const PfcIngress&) = delete;

  // Accounting into this port's own counters (single-writer case).
  void on_enqueue(uint8_t prio, uint32_t bytes) { local_.on_enqueue(prio, bytes); }
  void on_dequeue(uint8_t prio, uint32_t bytes) { local_.on_dequeue(prio, bytes); }
  PfcIngressBytes& local() { return local_; }
  const PfcIngressBytes& local() const { return local_; }

  // XOFF when the shared part (bytes beyond the reserve) > threshold or any
  // byte is in headroom; XON when none is and the shared part <= xon_level
  // (threshold - hysteresis, floored at 0). free_bytes (the free pool)
  // matters only for dynamic thresholds.
  uint64_t threshold(uint64_t free_bytes) const;
  uint64_t xon_level(uint64_t free_bytes) const;

  // Whether a frame is due at now_ns, and what it carries. Any priority that
  // changes state or whose refresh is due triggers a frame; the frame then
  // also refreshes every other priority still in XOFF. The first form reads
  // local(); the second takes per-priority bytes summed by the caller.
  bool poll(uint64_t now_ns, uint64_t free_bytes, PfcDecision* out) const {
    return poll(now_ns, local_.snapshot(), free_bytes, out);
  }
  bool poll(uint64_t now_ns, const std::array<uint64_t, kPfcClasses>& bytes, uint64_t free_bytes,
            PfcDecision* out) const {
    return poll(now_ns, bytes, {}, free_bytes, out);
  }
  bool poll(uint64_t now_ns, const std::array<uint64_t, kPfcClasses>& bytes,
            const std::array<uint64_t, kPfcClasses>& headroom, uint64_t free_bytes,
            PfcDecision* out) const;
  // The threshold a packet's classification into headroom compares with
  // (UINT64_MAX without headroom accounting).
  uint64_t headroom_threshold(uint64_t free_bytes) const {
    return cfg_.headroom_bytes != 0 ? threshold(free_bytes) : UINT64_MAX;
  }
  const PfcIngressConfig& config() const { return cfg_; }
  // The frame for `d` left (was queued) at now_ns: commit the state.
  void on_sent(const PfcDecision& d, uint64_t now_ns);

  // When the next refresh falls due (UINT64_MAX: nothing in XOFF), so the
  // caller can poll on time without new traffic.
  uint64_t next_refresh_ns() const;
  // Slot 0..7 (PFC) or kAllPriorities (PAUSE).
  bool in_xoff(uint32_t slot) const { return xoff_[slot]; }
  // Pause time of one XOFF at the link rate; refresh after half of it.
  uint64_t pause_ns() const { return pause_ns_; }
  const PfcTxStats& stats() const { return stats_; }
  PfcMode mode() const { return cfg_.mode; }

 private:
  bool poll_pause(uint64_t now_ns, uint64_t shared, bool in_headroom, uint64_t thr, uint64_t xon,
                  PfcDecision* out) const;
  uint64_t shared(uint64_t bytes) const {
    return bytes > cfg_.reserve_bytes ? bytes - cfg_.reserve_bytes : 0;
  }
  void commit(uint32_t slot, uint16_t quanta, uint64_t now_ns);

  static constexpr unsigned kAlphaFracBits = 20;
  PfcIngressConfig cfg_;
  uint64_t alpha_fp_ = 0;
  uint64_t pause_ns_;
  uint64_t refresh_after_ns_;
  PfcIngressBytes local_;
  bool xoff_[kPfcSlots] = {};
  uint64_t refresh_at_ns_[kPfcSlots] = {};
  PfcTxStats stats_;
};

}  // namespace sluice
