#include "lib/emulator/hosts/transport_host.h"

#include <algorithm>

namespace sluice {

// Senders are built with their flow's time from 0; start() moves them.
TransportHost::TransportHost(uint32_t ip, const std::vector<FlowListEntry>& flows,
                             const TransportMaker& maker)
    : ip_(ip),
      wants_int_(maker.wants_int()),
      cal_([&] {
        uint32_t n = 0;
        for (const FlowListEntry& f : flows) n += (f.src_ip == ip) + (f.dst_ip == ip);
        return n;
      }()),
      replies_(kFirstReplyRing) {
  for (const FlowListEntry& f : flows) {
    if (f.src_ip == ip) send_.push_back(SendFlow{f, nullptr});
    if (f.dst_ip == ip) recv_.push_back(RecvFlow{f, nullptr});
  }
  send_of_.reserve(static_cast<uint32_t>(send_.size()));
  for (uint32_t i = 0; i < send_.size(); ++i) send_of_.insert(send_[i].flow.id, i);
  recv_of_.reserve(static_cast<uint32_t>(recv_.size()));
  for (uint32_t i = 0; i < recv_.size(); ++i) recv_of_.insert(recv_[i].flow.id, i);
  maker_ = &maker;
}

void TransportHost::start(uint64_t start_ns) {
  start_ns_ = start_ns;
  for (SendFlow& f : send_)
    f.sender = maker_->sender(FlowSpec{f.flow.id, f.flow.bytes, start_ns + f.flow.start_ns});
  for (RecvFlow& f : recv_)
    f.receiver = maker_->receiver(FlowSpec{f.flow.id, f.flow.bytes, start_ns + f.flow.start_ns});
  maker_ = nullptr;
  for (uint32_t i = 0; i < send_.size(); ++i) cal_.set(i, start_ns + send_[i].flow.start_ns);
}

uint64_t TransportHost::next_due_ns() const {
  // A NIC that refused a segment wakes the host with sent() (or the port
  // retries after a dry pool); due "now" instead would spin at this instant
  // for as long as the NIC is paused.
  if (nic_blocked_) return kTransportNever;
  if (reply_count_ != 0) return 0;  // the caller clamps to now
  return cal_.empty() ? kTransportNever : cal_.next_time();
}

// A receiver's replies, in order; the first ACK after its flow became whole
// is tagged, so that its departure is noted (sent()).
void TransportHost::push_replies(uint32_t r, const Segment* out, uint32_t n) {
  RecvFlow& rf = recv_[r];
  for (uint32_t k = 0; k < n; ++k) {
    uint32_t tag = kReplyTag;
    if (rf.ack_owed && out[k].kind == SegmentKind::kAck) {
      rf.ack_owed = false;
      tag = kFinalAckTag + r;
    }
    push_reply(out[k], rf.flow.src_ip, tag);
  }
}

void TransportHost::push_reply(const Segment& s, uint32_t dst_ip, uint32_t tag) {
  if (reply_count_ == replies_.size()) {
    if (replies_.size() == kReplyRing) {
      ++counters_.reply_overflow;
      return;
    }
    // Twice as large, in order from the head: rare (a host holds as many
    // replies at once as its NIC has refused), and memory then follows
    // what a host holds, not the ring's limit.
    std::vector<Reply> grown(replies_.size() * 2);
    for (uint32_t i = 0; i < reply_count_; ++i)
      grown[i] = replies_[(reply_head_ + i) & (replies_.size() - 1)];
    replies_.swap(grown);
    reply_head_ = 0;
  }
  Reply& r = replies_[(reply_head_ + reply_count_++) & (replies_.size() - 1)];
  r.dst_ip = dst_ip;
  r.tag = tag;
  copy_segment(&r.s, s);
}

void TransportHost::poll(uint64_t now_ns, SegmentSink& sink) {
  while (reply_count_ != 0) {
    const Reply& r = replies_[reply_head_];
    if (!sink.emit(r.s, r.dst_ip, r.tag)) {
      ++counters_.nic_full;
      nic_blocked_ = true;
      return;
    }
    reply_head_ = (reply_head_ + 1) & (replies_.size() - 1);
    --reply_count_;
    ++counters_.replies_sent;
  }
  nic_blocked_ = false;
  while (!cal_.empty() && cal_.next_time() <= now_ns && !nic_blocked_) {
    const uint32_t id = cal_.next_element();
    if (id >= send_.size()) {
      RecvFlow& rf = recv_[id - send_.size()];
      Segment* out = scratch_;
      const uint32_t n = rf.receiver->on_timer(now_ns, out);
      push_replies(id - static_cast<uint32_t>(send_.size()), out, n);
      cal_.set(id, rf.receiver->timer_due_ns());
      // Replies go before any data: hand them over now.
      if (reply_count_ != 0) return poll(now_ns, sink);
      continue;
    }
    visit(id, now_ns, sink);
  }
}

void TransportHost::visit(uint32_t i, uint64_t now_ns, SegmentSink& sink) {
  SendFlow& f = send_[i];
  if (!f.started) f.started = true;
  FlowSender& s = *f.sender;
  if (s.timer_due_ns() <= now_ns) {
    s.on_timer(now_ns);
    f.refused = false;
  }
  if (f.holding && !f.in_nic && !f.done) {
    emit_data(i, f.held, sink);
  } else if (!f.in_nic && !f.done && !f.refused && s.send_due_ns() <= now_ns) {
    Segment& seg = scratch_[0];
    f.refused = !s.send(now_ns, &seg);
    if (!f.refused) {
      seg.int_request = wants_int_;
      emit_data(i, seg, sink);
    }
  }
  reschedule(i, now_ns);
}

// A NIC with fewer frames than the host has flows can be full when a
// segment the sender has already counted as sent is due: it is held, not
// lost, and goes first once a departure makes room (sent()).
void TransportHost::emit_data(uint32_t i, const Segment& seg, SegmentSink& sink) {
  SendFlow& f = send_[i];
  if (sink.emit(seg, f.flow.dst_ip, i)) {
    f.in_nic = true;
    f.holding = false;
    ++counters_.data_sent;
    return;
  }
  ++counters_.nic_full;
  nic_blocked_ = true;
  if (!f.holding) {
    f.held = seg;
    f.holding = true;
  }
}

void TransportHost::reschedule(uint32_t i, uint64_t now_ns) {
  SendFlow& f = send_[i];
  if (!f.started) return;  // still due at its start
  const FlowSender& s = *f.sender;
  if (!f.done && s.completed_ns() != 0) note_done(i);
  uint64_t due = s.timer_due_ns();
  if (f.holding && !f.done) {
    due = std::min(due, now_ns);  // waits for the NIC only (poll stops while it is full)
  } else if (!f.in_nic && !f.done && !f.refused) {
    const uint64_t send_due = s.send_due_ns();
    // A sender that can send "now" is visited again at this instant only
    // if it has not just tried (the same poll would spin otherwise).
    due = std::min(due, send_due == kTransportNever ? send_due : std::max(send_due, now_ns));
  }
  // A finished flow's timers (an RTO, DCQCN's rate timers) no longer matter.
  cal_.set(i, f.done ? kTransportNever : due);
}

void TransportHost::note_done(uint32_t i) {
  send_[i].done = true;
  ++done_;
}

void TransportHost::sent(uint32_t tag, uint64_t now_ns) {
  nic_blocked_ = false;  // a reply's departure frees room as a data segment's does
  if (is_reply(tag)) {
    if (tag != kReplyTag) recv_[tag - kFinalAckTag].acked_ns = now_ns;
    return;
  }
  if (tag >= send_.size()) return;
  send_[tag].in_nic = false;
  send_[tag].refused = false;
  reschedule(tag, now_ns);
}

void TransportHost::receive(uint64_t now_ns, const Segment& s) {
  if (s.kind == SegmentKind::kData) {
    const uint32_t r = recv_of_.find(s.flow);
    if (r == FlowIndex::kNone) {
      ++counters_.stray;
      return;
    }
    ++counters_.data_received;
    RecvFlow& rf = recv_[r];
    Segment* out = scratch_;
    const uint32_t n = rf.receiver->receive(now_ns, s, out);
    if (!rf.whole && rf.receiver->delivered_bytes() >= rf.flow.bytes) {
      // This segment completed the flow's bytes (its timestamp is its
      // departure from the sender's NIC).
      rf.whole = true;
      rf.ack_owed = true;
      rf.sent_ns = s.ts_ns;
      rf.arrived_ns = now_ns;
    }
    push_replies(r, out, n);
    cal_.set(static_cast<uint32_t>(send_.size()) + r, rf.receiver->timer_due_ns());
    return;
  }
  const uint32_t i = send_of_.find(s.flow);
  if (i == FlowIndex::kNone) {
    ++counters_.stray;
    return;
  }
  ++counters_.replies_received;
  SendFlow& f = send_[i];
  if (!f.started) return;  // cannot be ours yet
  f.sender->receive(now_ns, s);
  f.refused = false;
  reschedule(i, now_ns);
}

bool TransportHost::set_allocation(uint32_t flow_id, uint64_t now_ns, uint64_t rate_bps,
                                   uint64_t until_ns) {
  const uint32_t i = send_of_.find(flow_id);
  if (i == FlowIndex::kNone) return false;
  SendFlow& f = send_[i];
  if (!f.started || f.done) return false;
  f.sender->set_allocation(now_ns, rate_bps, until_ns);
  f.refused = false;
  reschedule(i, now_ns);
  return true;
}

void TransportHost::outcomes(std::vector<FlowOutcome>* out) const {
  for (const SendFlow& f : send_) {
    const uint64_t c = f.sender->completed_ns();
    out->push_back(FlowOutcome{f.flow.id, f.flow.src_ip, f.flow.dst_ip, f.flow.bytes,
                               f.flow.start_ns, c == 0 ? 0 : c - start_ns_, f.started,
                               f.flow.incast, f.sender->counters()});
  }
}

void TransportHost::receipts(std::vector<FlowReceipt>* out) const {
  for (const RecvFlow& rf : recv_) {
    if (!rf.whole) continue;
    out->push_back({rf.flow.id, rf.sent_ns - start_ns_, rf.arrived_ns - start_ns_,
                    rf.acked_ns != 0 ? rf.acked_ns - start_ns_ : 0});
  }
}

}  // namespace sluice
