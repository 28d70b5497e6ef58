#pragma once
// The sending side of an emulated host NIC behind a replaying capture port
// (SPEC 4.7, docs/pcap-ports.md "The host NIC"). Frames the application
// hands over (at their capture time) wait in per-destination or per-flow send
// queues (nic_queues.h); the NIC puts one frame at a time on its wire, never
// faster than the link's rate, taking the queues in round robin and skipping
// those the network holds:
//   - 802.3x PAUSE holds every queue, PFC the queues whose head frame is of
//     a paused priority (each a PauseTimer, the standard's timer restart);
//   - with `bfc`, BFC_PAUSE / BFC_RESUME / BFC_BITMAP from the first switch
//     hold single queues (any shard 0..63, as a switch upstream does; BFC
//     3.3.2), and the frames carry their queue number in the 0x88B6 shim
//     (the replies' queue, outside BFC, carries none);
//     up to 4096 queues, a queue per flow as an RDMA NIC keeps a queue pair
//     per flow, cost only what they hold: queue sets are bits with a
//     summary word (lib/common/queue_set.h);
//   - with `floodgate`, FG_DST_PAUSE entries hold every queue whose head
//     frame goes to a paused destination IPv4, until a resume for it
//     (dst_pause_state.h; no timeout, as in the paper).
// Further holds (Flowtune's per-flow rate) belong in pick(): a queue is a
// destination or a flow. With `by_rank` (pFabric's hosts, docs/transports.md
// "pFabric") the queue whose head ranks first goes instead of the next in
// round robin: a host sends its flows in the order pFabric's switches serve
// them.
//
// A frame the network holds is delayed, never dropped. When `capacity`
// frames are held the application waits (the caller stops handing frames).
//
// Timing: the chosen frame may start at
//   start = max(due, wire free, end of what last held its queue or class)
// and occupies the wire for (bytes + overhead) * 8 / rate, kept exactly (ns
// and a remainder in ns x bps), so the long-run rate is exact; start is
// rounded up to the ns.
// Frames the host receives take effect in time order when poll() reaches
// their time (a frame stamped in the future, such as a transmit departure,
// does not act early); one stamped before the last poll counts from it.
//
// Rate 0 disables the model (the caller replays directly). Time is always an
// argument (ns); no allocation after construction.

#include <algorithm>
#include <array>
#include <cstdint>
#include <memory>
#include <vector>

#include "lib/control/control_frame.h"
#include "lib/emulator/nic/dst_pause_state.h"
#include "lib/emulator/nic/nic_queues.h"
#include "lib/emulator/nic/pause_timer.h"
#include "lib/mechanisms/bfc/pause_counters.h"
#include "lib/mechanisms/bfc/upstream_pause_state.h"

namespace sluice {

struct HostNicConfig {
  uint64_t rate_bps = 0;  // 0: no NIC model
  uint32_t overhead_bytes = 24;
  uint32_t queues = 1;        // 1..4096
  uint32_t capacity = 16384;  // frames held in all queues before the application waits
  uint64_t sticky_ns = 0;     // a key keeps an idle queue this long (NicQueues)
  bool bfc = false;           // honours BFC per queue; frames carry the shim
  bool floodgate = false;     // honours FG_DST_PAUSE per destination IPv4
  // Destinations held at once; a pause of one more is counted, not held.
  uint32_t dst_pause_capacity = 256;
  // Replies (enqueued with kReplyKey) in the last queue, which sends
  // before any other whenever it may; data keys share the others. It is
  // outside BFC's queues: its frames name no queue (shim_queue()), and a
  // BFC pause or resume naming it is invalid, a bitmap bit for it unknown.
  bool reply_queue = false;
  // pFabric's hosts: the queue whose head frame has the smallest rank sends
  // next (of equal ranks, the one handed over first, then round robin),
  // instead of plain round robin.
  bool by_rank = false;
};

// What a frame transmitted toward the host was to it.
enum class HostFrame : uint8_t { kOther, kPause, kPfc, kBfc, kDstPause, kInvalid };

class HostNic {
 public:
  static constexpr uint32_t kPauseSlot = 8;  // class_paused_ns(): the 802.3x PAUSE
  static constexpr uint32_t kSlots = 9;

  // enqueue()'s key for a reply (ACK, NACK, CNP) when reply_queue is on.
  static constexpr uint64_t kReplyKey = UINT64_MAX;

  HostNic() = default;  // disabled
  explicit HostNic(const HostNicConfig& cfg);

  bool enabled() const { return cfg_.rate_bps != 0; }
  // The upstream queue number a frame sent from queue q carries in its
  // shim: q, or kNoUpstreamQueue for the replies' queue, which BFC never
  // holds (a switch then counts and pauses nothing for it).
  uint16_t shim_queue(uint32_t q) const {
    return q < bfc_queues() ? static_cast<uint16_t>(q) : kNoUpstreamQueue;
  }
  bool bfc() const { return cfg_.bfc; }
  bool floodgate() const { return cfg_.floodgate; }
  const HostNicConfig& config() const { return cfg_; }

  // A frame transmitted toward the host reaches it at at_ns: PAUSE and PFC
  // always act, BFC frames only with `bfc`, FG_DST_PAUSE only with
  // `floodgate` (else kOther); a MAC Control or sluice control frame that
  // does not parse (or a dst pause naming 0.0.0.0) is kInvalid and changes
  // nothing.
  HostFrame receive(uint64_t at_ns, const uint8_t* frame, uint32_t len);
  // The same, parsed: pause the enabled classes for length_ns[c] (0: resume).
  void pause_classes(uint64_t at_ns, uint8_t class_enable,
                     const std::array<uint64_t, 8>& length_ns);
  void pause_port(uint64_t at_ns, uint64_t length_ns);  // 802.3x PAUSE
  void bfc_message(uint64_t at_ns, const ControlMessage& msg);
  // One FG_DST_PAUSE entry: hold (pause) or release dst (not 0) from at_ns.
  void dst_pause(uint64_t at_ns, uint32_t dst, bool pause);

  // Takes every received frame up to now_ns into account (now_ns never
  // decreases between calls). Call before enqueue() and pick() at now_ns.
  void poll(uint64_t now_ns);

  bool full() const { return queues_ && queues_->full(); }
  // The application hands over frame f at now_ns; key is its destination or
  // flow. Not when full().
  void enqueue(uint64_t key, const NicFrame& f, uint64_t now_ns);

  struct Pick {
    uint32_t queue;
    NicFrame frame;
    uint64_t start_ns;  // when the model says it starts (<= now)
  };
  // The frame to send at now_ns (after poll(now_ns)): false while the wire
  // is busy or no queue may send.
  bool pick(uint64_t now_ns, Pick* out) const;
  void sent(const Pick& p);  // it went: leaves its queue, occupies the wire
  // When the wire finishes the last frame sent (ns, rounded up).
  uint64_t wire_free_ns() const;

  // Exact fabric time (after poll(now_ns) and the sends at now_ns): the
  // earliest instant something could change here without a new frame from
  // the application: a received frame takes effect, or a held frame may go
  // (the wire falls free, a PAUSE/PFC pause runs out). UINT64_MAX when
  // nothing will, e.g. every queue is empty or held by BFC or dstPause
  // until a frame releases it.
  uint64_t next_due_ns(uint64_t now_ns) const;

  // Time each priority (kPauseSlot: the whole port) was paused up to now_ns.
  uint64_t class_paused_ns(uint32_t slot, uint64_t now_ns) const;
  // Their sum: PAUSE/PFC pause time summed over the priorities (PAUSE once).
  // Inline: the replay port refreshes its gauge on every poll.
  uint64_t paused_ns(uint64_t now_ns) const {
    if (!timers_used_) return 0;
    uint64_t total = 0;
    for (const PauseTimer& t : timers_) total += t.paused_ns(now_ns);
    return total;
  }
  // Any thread may read them (UpstreamPauseState keeps them in
  // RelaxedCounters): queues 0..63 held, and how many are.
  uint64_t bfc_paused_mask() const { return bfc_ ? bfc_->paused_mask() : 0; }
  uint64_t bfc_paused_count() const { return bfc_ ? bfc_->paused_count() : 0; }
  const NicQueues& queues() const { return *queues_; }
  uint64_t bfc_invalid() const { return bfc_ ? bfc_->invalid_frames.get() : 0; }
  uint64_t bfc_unknown_queue_bitmaps() const {
    return bfc_ ? bfc_->unknown_queue_bitmaps.get() : 0;
  }
  // Floodgate's dstPause (nullptr unless `floodgate`): the destinations held
  // now, the time they were held, and its counters.
  const DstPauseState* dst_pause_state() const { return dst_.get(); }
  uint32_t dst_paused() const { return dst_ ? static_cast<uint32_t>(dst_->now_paused.get()) : 0; }
  uint64_t dst_paused_ns(uint64_t now_ns) const { return dst_ ? dst_->paused_ns(now_ns) : 0; }
  uint64_t dst_pause_overflow() const { return dst_ ? dst_->overflow.get() : 0; }

 private:
  enum class Kind : uint8_t { kPort, kClasses, kBfc };
  struct Event {
    uint64_t at_ns;
    Kind kind;
    uint8_t class_enable;
    std::array<uint64_t, 8> length_ns;  // kPort: [0]
    ControlType bfc_type;
    uint8_t shard;
    uint16_t count;    // queue of a pause / resume, queue count of a bitmap
    bool bits_beyond;  // a bitmap bit set for a queue this NIC lacks
    // A bitmap's bytes for this NIC's queues are in bitmap_bytes_, at the
    // event's place in pending_.
  };
  static constexpr uint32_t kMaxPending = 64;
  // FG_DST_PAUSE entries wait in their own ring: a frame carries up to ~180.
  struct DstEvent {
    uint64_t at_ns;
    uint32_t dst;
    bool pause;
  };
  static constexpr uint32_t kMaxDstPending = 1024;

  void push(Event e, const uint8_t* bitmap = nullptr);
  // The queues BFC may hold: all but the replies' queue.
  uint32_t bfc_queues() const { return queues_->num_queues() - (cfg_.reply_queue ? 1 : 0); }
  uint32_t bitmap_bytes() const { return (queues_->num_queues() + 7) / 8; }
  // Candidates to send: nonempty queues BFC does not hold, word i.
  uint64_t sendable_word(uint32_t i) const {
    const uint64_t w = queues_->nonempty().word(i);
    return bfc_ ? w & ~bfc_->paused_set().word(i) : w;
  }
  void apply_oldest();
  void apply(const Event& e, uint32_t slot);
  HostFrame dst_pause_message(uint64_t at_ns, const ControlMessage& msg);
  void push_dst(DstEvent e);
  void apply_oldest_dst();
  bool dst_held(uint32_t dst) const { return dst_ && dst_->paused(dst); }
  uint64_t ready_ns(uint32_t q, uint8_t priority) const;
  // A head frame no queue may send: its class is paused, or its destination.
  bool head_held(const NicFrame& f) const {
    return ((paused_classes_ >> (f.priority & 7)) & 1) || dst_held(f.dst_ip);
  }
  // Queue q's head, to start once the wire (free at `wire`) and q may.
  Pick pick_of(uint32_t q, uint64_t wire) const {
    const NicFrame& f = queues_->head(q);
    return {q, f, std::max({f.due_ns, wire, ready_ns(q, f.priority)})};
  }

  HostNicConfig cfg_;
  std::unique_ptr<NicQueues> queues_;
  std::unique_ptr<UpstreamPauseState> bfc_;
  // When the wire finishes its last frame, exactly: wire_ns_ + wire_rem_ /
  // rate_bps ns (wire_rem_ < rate_bps); and rounded up to the ns.
  uint64_t wire_ns_ = 0;
  uint64_t wire_rem_ = 0;
  uint64_t wire_free_ns_ = 0;
  std::array<PauseTimer, kSlots> timers_{};
  // A PAUSE or PFC frame has been applied: until then every timer is
  // closed and ends at 0, and the five lines they span are left unread.
  bool timers_used_ = false;
  uint8_t paused_classes_ = 0;  // at the last poll (bit c; all 8 under PAUSE)
  // By queue, with `bfc`: when BFC last released it.
  std::unique_ptr<uint64_t[]> bfc_resumed_ns_;
  std::unique_ptr<uint8_t[]> bitmap_bytes_;    // kMaxPending x bitmap_bytes(), with `bfc`
  std::unique_ptr<uint64_t[]> paused_before_;  // with `bfc`: the held set before a bitmap
  std::unique_ptr<DstPauseState> dst_;
  // By queue, with `floodgate`: when the destination of its head was last
  // released.
  std::unique_ptr<uint64_t[]> dst_resumed_ns_;
  std::vector<DstEvent> dst_pending_;  // floodgate: sized once
  uint32_t dst_head_ = 0;
  uint32_t dst_count_ = 0;
  uint32_t round_robin_ = 0;  // first queue pick() looks at
  uint64_t polled_ns_ = 0;
  std::array<Event, kMaxPending> pending_{};
  uint32_t head_ = 0;
  uint32_t count_ = 0;
};

}  // namespace sluice
