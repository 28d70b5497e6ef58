#pragma once
// The upstream side of BFC for one egress port: which of its data queues
// downstream shards hold paused. A queue is paused while any shard holds it;
// BFC_PAUSE / BFC_RESUME change one shard's hold, BFC_BITMAP replaces all of
// that shard's holds (repairing a lost pause or resume). Transitions drive
// EgressPort::pause_queue (until resumed) / resume_queue when built on a
// port; a BFC host NIC (lib/emulator/nic/host_nic.h) builds it on its queue
// count (up to 4096, a queue per flow) and reads paused_set(). The paused queues keep their
// packets. A shard is the *sender's* lcore slot, so any shard the wire allows (0..63) is accepted,
// whatever this process's worker count. State is sized by the queue count.
// docs/mechanisms/bfc.md ("Upstream side").
// Single writer (the lcore owning the port); no allocation after construction.

#include <cstdint>
#include <memory>

#include "lib/common/queue_set.h"
#include "lib/common/relaxed_counter.h"
#include "lib/control/control_frame.h"
#include "lib/tm/egress_port.h"

namespace sluice {

class UpstreamPauseState {
 public:
  // Shards a downstream may send from (the frame's shard byte allows 256).
  static constexpr uint32_t kMaxShards = 64;

  explicit UpstreamPauseState(EgressPort* port);
  explicit UpstreamPauseState(uint32_t num_queues);  // no port: read paused_set()

  // Each returns false (and counts invalid_frames, changing nothing) for a
  // shard at or beyond kMaxShards or, for a pause or resume, a queue this
  // port lacks. `bits` holds `count` queue bits, bit q = byte q/8, bit q%8
  // (LSB first); queues at or beyond `count` are released by that shard. A
  // bitmap's bits for queues this port lacks are ignored (counted in
  // unknown_queue_bitmaps) and the rest applied, so loss repair goes on.
  bool on_pause(uint8_t shard, uint16_t q);
  bool on_resume(uint8_t shard, uint16_t q);
  bool on_bitmap(uint8_t shard, const uint8_t* bits, uint16_t count);

  // A parsed BFC_PAUSE / BFC_RESUME / BFC_BITMAP; false for other types.
  bool on_message(const ControlMessage& msg);

  uint32_t num_queues() const { return num_queues_; }
  bool paused(uint16_t q) const { return holders_[q] != 0; }
  const QueueSet& paused_set() const { return paused_; }
  // Bit q set = queue q < 64 paused (a switch port's queues, for N_active;
  // the scraper may read it).
  uint64_t paused_mask() const { return paused_mask_.get(); }
  uint64_t paused_count() const { return paused_count_.get(); }  // the scraper may read it

  RelaxedCounter invalid_frames;
  RelaxedCounter unknown_queue_bitmaps;  // applied, with bits for queues we lack
  // Holds a bitmap changed: a shard's pause or resume that never arrived
  // (frames of one shard arrive in order, so a bitmap that disagrees with
  // the holds repairs a lost frame).
  RelaxedCounter bitmap_repaired_pauses;
  RelaxedCounter bitmap_repaired_resumes;

 private:
  bool beyond_clear(const uint8_t* bits, uint16_t count) const;
  void apply_bit(uint8_t shard, uint16_t q, bool set);
  void hold(uint8_t shard, uint16_t q);
  void release(uint8_t shard, uint16_t q);
  bool holds(uint8_t shard, uint16_t q) const { return (holders_[q] >> shard) & 1; }

  EgressPort* port_ = nullptr;
  uint32_t num_queues_;
  QueueSet paused_;
  RelaxedCounter paused_mask_;  // paused_'s first word
  RelaxedCounter paused_count_;
  std::unique_ptr<uint64_t[]> holders_;  // by queue: bit s = shard s holds it
};

}  // namespace sluice
