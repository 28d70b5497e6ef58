#include "lib/emulator/nic/host_nic.h"

#include <algorithm>
#include <bit>
#include <cstring>

#include "lib/mechanisms/pfc/pause_frame.h"
#include "lib/mechanisms/pfc/pause_quanta.h"
#include "lib/net/ethertypes.h"

namespace sluice {

HostNic::HostNic(const HostNicConfig& cfg)
    : cfg_(cfg),
      queues_(std::make_unique<NicQueues>(cfg.queues, cfg.capacity, cfg.sticky_ns,
                                          cfg.reply_queue ? 1 : 0)) {
  const uint32_t n = queues_->num_queues();
  if (cfg_.bfc) {
    bfc_ = std::make_unique<UpstreamPauseState>(n);
    bfc_resumed_ns_ = std::make_unique<uint64_t[]>(n);
    bitmap_bytes_ = std::make_unique<uint8_t[]>(size_t{kMaxPending} * bitmap_bytes());
    paused_before_ = std::make_unique<uint64_t[]>(bfc_->paused_set().num_words());
  }
  if (cfg_.floodgate) {
    dst_ = std::make_unique<DstPauseState>(cfg_.dst_pause_capacity);
    dst_pending_.resize(kMaxDstPending);
    dst_resumed_ns_ = std::make_unique<uint64_t[]>(n);
  }
}

namespace {

constexpr uint32_t kTypeOffset = 12;
constexpr uint32_t kBodyOffset = 14;

bool is_bfc_type(ControlType t) {
  return t == ControlType::kBfcPause || t == ControlType::kBfcResume ||
         t == ControlType::kBfcBitmap;
}

}  // namespace

HostFrame HostNic::receive(uint64_t at_ns, const uint8_t* frame, uint32_t len) {
  if (!enabled() || len < kBodyOffset) return HostFrame::kOther;
  const uint16_t type = static_cast<uint16_t>(frame[kTypeOffset] << 8 | frame[kTypeOffset + 1]);
  if (type == kEtherTypeMacControl) {
    if (!std::equal(kMacControlDst.begin(), kMacControlDst.end(), frame)) return HostFrame::kOther;
    MacControlFrame f;
    if (!parse_mac_control(frame + kBodyOffset, len - kBodyOffset, &f)) return HostFrame::kInvalid;
    if (f.is_pause()) {
      pause_port(at_ns, quanta_to_ns(f.quanta[0], cfg_.rate_bps));
      return HostFrame::kPause;
    }
    std::array<uint64_t, 8> length{};
    for (uint32_t c = 0; c < kPfcClasses; ++c) length[c] = quanta_to_ns(f.quanta[c], cfg_.rate_bps);
    pause_classes(at_ns, f.class_enable, length);
    return HostFrame::kPfc;
  }
  if (type != kEtherTypeSluiceControl || !(cfg_.bfc || cfg_.floodgate)) return HostFrame::kOther;
  ControlMessage msg;
  if (parse_control(frame + kBodyOffset, len - kBodyOffset, &msg) != ControlParseResult::kOk) {
    if (dst_) dst_->invalid.add();
    return HostFrame::kInvalid;
  }
  if (msg.type == ControlType::kFgDstPause && dst_) return dst_pause_message(at_ns, msg);
  if (!is_bfc_type(msg.type) || !cfg_.bfc) return HostFrame::kOther;
  bfc_message(at_ns, msg);
  return HostFrame::kBfc;
}

// Checked whole before any entry counts, so a bad frame changes nothing.
HostFrame HostNic::dst_pause_message(uint64_t at_ns, const ControlMessage& msg) {
  for (uint32_t i = 0; i < msg.count; ++i) {
    if (msg.dst_pause(i).dst_ip == 0) {
      dst_->invalid.add();
      return HostFrame::kInvalid;
    }
  }
  dst_->frames.add();
  for (uint32_t i = 0; i < msg.count; ++i) {
    const DstPauseEntry e = msg.dst_pause(i);
    dst_pause(at_ns, e.dst_ip, e.pause);
  }
  return HostFrame::kDstPause;
}

void HostNic::pause_port(uint64_t at_ns, uint64_t length_ns) {
  Event e{};
  e.at_ns = at_ns;
  e.kind = Kind::kPort;
  e.length_ns[0] = length_ns;
  push(e);
}

void HostNic::pause_classes(uint64_t at_ns, uint8_t class_enable,
                            const std::array<uint64_t, 8>& length_ns) {
  if (class_enable == 0) return;
  Event e{};
  e.at_ns = at_ns;
  e.kind = Kind::kClasses;
  e.class_enable = class_enable;
  e.length_ns = length_ns;
  push(e);
}

void HostNic::bfc_message(uint64_t at_ns, const ControlMessage& msg) {
  if (!bfc_) return;
  Event e{};
  e.at_ns = at_ns;
  e.kind = Kind::kBfc;
  e.bfc_type = msg.type;
  e.shard = msg.shard;
  e.count = msg.count;
  // The bytes for BFC's queues travel with the event; a bit beyond them
  // (the replies' queue included) is noted now.
  const uint32_t n = bfc_queues();
  if (msg.type != ControlType::kBfcBitmap) {
    if (msg.count == n && cfg_.reply_queue) {
      bfc_->invalid_frames.add(1);
      return;
    }
    return push(e);
  }
  for (uint32_t q = n; q < msg.count; ++q) e.bits_beyond = e.bits_beyond || msg.queue_paused(q);
  e.count = static_cast<uint16_t>(std::min<uint32_t>(msg.count, n));
  push(e, msg.entries);
}

void HostNic::dst_pause(uint64_t at_ns, uint32_t dst, bool pause) {
  if (!enabled() || !dst_) return;
  push_dst({at_ns, dst, pause});
}

// Pending frames stay in time order and never before the last poll.
void HostNic::push(Event e, const uint8_t* bitmap) {
  if (!enabled()) return;
  if (count_ == kMaxPending) apply_oldest();
  e.at_ns = std::max(e.at_ns, polled_ns_);
  if (count_ != 0) e.at_ns = std::max(e.at_ns, pending_[(head_ + count_ - 1) % kMaxPending].at_ns);
  const uint32_t slot = (head_ + count_) % kMaxPending;
  pending_[slot] = e;
  if (bitmap != nullptr) {
    uint8_t* bytes = &bitmap_bytes_[size_t{slot} * bitmap_bytes()];
    const uint32_t given = (e.count + 7u) / 8;
    std::memcpy(bytes, bitmap, given);
    std::memset(bytes + given, 0, bitmap_bytes() - given);
  }
  ++count_;
}

void HostNic::apply_oldest() {
  const uint32_t slot = head_;
  head_ = (head_ + 1) % kMaxPending;
  --count_;
  apply(pending_[slot], slot);
}

void HostNic::apply(const Event& e, uint32_t slot) {
  switch (e.kind) {
    case Kind::kPort:
      timers_[kPauseSlot].apply(e.at_ns, e.length_ns[0]);
      timers_used_ = true;
      return;
    case Kind::kClasses:
      for (uint32_t c = 0; c < kPfcClasses; ++c)
        if ((e.class_enable >> c) & 1) timers_[c].apply(e.at_ns, e.length_ns[c]);
      timers_used_ = true;
      return;
    case Kind::kBfc:
      break;
  }
  // A queue released starts its waiting head no earlier than the release.
  if (e.bfc_type == ControlType::kBfcPause) {
    bfc_->on_pause(e.shard, e.count);
  } else if (e.bfc_type == ControlType::kBfcResume) {
    const bool was = e.count < queues_->num_queues() && bfc_->paused(e.count);
    if (bfc_->on_resume(e.shard, e.count) && was && !bfc_->paused(e.count))
      bfc_resumed_ns_[e.count] = e.at_ns;
  } else {
    const QueueSet& held = bfc_->paused_set();
    const uint32_t words = held.num_words();
    for (uint32_t i = 0; i < words; ++i) paused_before_[i] = held.word(i);
    const uint8_t* bits = &bitmap_bytes_[size_t{slot} * bitmap_bytes()];
    if (bfc_->on_bitmap(e.shard, bits, e.count) && e.bits_beyond) bfc_->unknown_queue_bitmaps.add();
    for (uint32_t i = 0; i < words; ++i) {
      for (uint64_t r = paused_before_[i] & ~held.word(i); r != 0; r &= r - 1)
        bfc_resumed_ns_[i * 64 + std::countr_zero(r)] = e.at_ns;
    }
  }
}

// As push(), in the dst pause ring (independent state, so its own order).
void HostNic::push_dst(DstEvent e) {
  if (dst_count_ == kMaxDstPending) apply_oldest_dst();
  e.at_ns = std::max(e.at_ns, polled_ns_);
  if (dst_count_ != 0) {
    e.at_ns = std::max(e.at_ns, dst_pending_[(dst_head_ + dst_count_ - 1) % kMaxDstPending].at_ns);
  }
  dst_pending_[(dst_head_ + dst_count_) % kMaxDstPending] = e;
  ++dst_count_;
}

// A released destination's waiting head frames start no earlier than the
// resume (the poll that applies it may come later).
void HostNic::apply_oldest_dst() {
  const DstEvent e = dst_pending_[dst_head_];
  dst_head_ = (dst_head_ + 1) % kMaxDstPending;
  --dst_count_;
  if (!dst_->apply(e.at_ns, e.dst, e.pause) || e.pause) return;
  const QueueSet& nonempty = queues_->nonempty();
  visit_from(
      nonempty.summary(), 0, [&](uint32_t i) { return nonempty.word(i); },
      [&](uint32_t q) {
        if (queues_->head(q).dst_ip == e.dst) dst_resumed_ns_[q] = e.at_ns;
        return false;
      });
}

void HostNic::poll(uint64_t now_ns) {
  while (count_ != 0 && pending_[head_].at_ns <= now_ns) apply_oldest();
  while (dst_count_ != 0 && dst_pending_[dst_head_].at_ns <= now_ns) apply_oldest_dst();
  polled_ns_ = std::max(polled_ns_, now_ns);
  if (!timers_used_) return;  // paused_classes_ stays 0
  paused_classes_ = timers_[kPauseSlot].paused_at(now_ns) ? 0xFF : 0;
  for (uint32_t c = 0; c < kPfcClasses; ++c)
    if (timers_[c].paused_at(now_ns)) paused_classes_ |= static_cast<uint8_t>(1u << c);
}

void HostNic::enqueue(uint64_t key, const NicFrame& f, uint64_t now_ns) {
  const uint32_t q = cfg_.reply_queue && key == kReplyKey
                         ? queues_->num_queues() - 1
                         : queues_->queue_of(key, now_ns, bfc_ ? &bfc_->paused_set() : nullptr);
  queues_->push(q, f, now_ns);
}

uint64_t HostNic::wire_free_ns() const { return wire_free_ns_; }

// When what last held queue q or its head's priority let go (end_ns() stays
// the last pause's end after it closes; 0 before any).
uint64_t HostNic::ready_ns(uint32_t q, uint8_t priority) const {
  // Each array is written only by its mechanism: a NIC without it leaves
  // the array's lines unread.
  uint64_t released = bfc_ ? bfc_resumed_ns_[q] : 0;
  if (dst_) released = std::max(released, dst_resumed_ns_[q]);
  if (!timers_used_) return released;
  return std::max({released, timers_[priority & 7].end_ns(), timers_[kPauseSlot].end_ns()});
}

bool HostNic::pick(uint64_t now_ns, Pick* out) const {
  const uint64_t wire = wire_free_ns_;
  if (wire > now_ns) return false;
  const uint64_t summary = queues_->nonempty().summary();
  if (summary == 0) return false;
  const uint32_t n = queues_->num_queues();
  bool skip_replies = false;
  if (cfg_.reply_queue) {
    // Replies first, unless what holds a queue holds theirs.
    const uint32_t rq = n - 1;
    if ((sendable_word(rq / 64) >> (rq % 64)) & 1) {
      if (!head_held(queues_->head(rq))) {
        *out = pick_of(rq, wire);
        return true;
      }
      skip_replies = true;
    }
  }
  // Round robin from round_robin_, a bit scan per queue looked at (not a
  // step per queue); by rank, the smallest of all, of equals the one handed
  // over first (strict comparisons keep round-robin order among full ties).
  bool found = false;
  visit_from(
      summary, round_robin_, [&](uint32_t i) { return sendable_word(i); },
      [&](uint32_t q) {
        if (skip_replies && q == n - 1) return false;
        const NicFrame& f = queues_->head(q);
        if (head_held(f)) return false;
        if (found && (f.rank > out->frame.rank ||
                      (f.rank == out->frame.rank && f.due_ns >= out->frame.due_ns)))
          return false;
        *out = pick_of(q, wire);
        found = true;
        return !cfg_.by_rank;
      });
  return found;
}

void HostNic::sent(const Pick& p) {
  // A frame that waited only for the wire starts at its exact end, not at
  // the rounded-up nanosecond, so rounding never accumulates.
  if (p.start_ns > wire_free_ns_) {
    wire_ns_ = p.start_ns;
    wire_rem_ = 0;
  }
  // The frame's time on the wire in ns x bps, split into whole ns and what
  // is left over (one 64-bit division: the bits of a frame times 10^9 fit).
  const uint64_t units = (uint64_t{p.frame.bytes} + cfg_.overhead_bytes) * 8 * 1'000'000'000ull;
  wire_ns_ += units / cfg_.rate_bps;
  wire_rem_ += units % cfg_.rate_bps;
  if (wire_rem_ >= cfg_.rate_bps) {
    wire_rem_ -= cfg_.rate_bps;
    ++wire_ns_;
  }
  wire_free_ns_ = wire_ns_ + (wire_rem_ != 0);
  queues_->pop(p.queue, p.start_ns);
  // The replies' queue goes outside the data queues' round robin.
  if (!cfg_.reply_queue || p.queue + 1 != queues_->num_queues())
    round_robin_ = (p.queue + 1) % queues_->num_queues();
}

uint64_t HostNic::next_due_ns(uint64_t now_ns) const {
  uint64_t due = UINT64_MAX;
  if (count_ != 0) due = pending_[head_].at_ns;
  if (dst_count_ != 0) due = std::min(due, dst_pending_[dst_head_].at_ns);
  if (!queues_ || !queues_->nonempty().any()) return due;
  const uint64_t wire = std::max(wire_free_ns(), now_ns);
  const PauseTimer& port = timers_[kPauseSlot];
  visit_from(
      queues_->nonempty().summary(), 0, [&](uint32_t i) { return sendable_word(i); },
      [&](uint32_t q) {
        const NicFrame& f = queues_->head(q);
        if (dst_held(f.dst_ip)) return false;  // until a resume, which is a pending event
        uint64_t ready = wire;
        if (timers_used_) {
          if (port.paused_at(now_ns)) ready = std::max(ready, port.end_ns());
          const PauseTimer& cls = timers_[f.priority & 7];
          if (cls.paused_at(now_ns)) ready = std::max(ready, cls.end_ns());
        }
        due = std::min(due, ready);
        return due == wire;  // nothing goes before the wire is free
      });
  return due;
}

uint64_t HostNic::class_paused_ns(uint32_t slot, uint64_t now_ns) const {
  return slot < kSlots ? timers_[slot].paused_ns(now_ns) : 0;
}

}  // namespace sluice
