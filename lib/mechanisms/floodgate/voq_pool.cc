#include "lib/mechanisms/floodgate/voq_pool.h"

#include <algorithm>

namespace sluice {

VoqPool::VoqPool(uint32_t count, uint32_t max_packets)
    : count_(std::clamp<uint32_t>(count, 1, kMaxVoqs)),
      nodes_(std::max<uint32_t>(max_packets, 1)),
      voqs_(count_) {
  for (uint32_t i = 0; i < nodes_.size(); ++i)
    nodes_[i].next = i + 1 < nodes_.size() ? i + 1 : kNone;
  free_node_ = 0;
  free_voqs_.reserve(count_);
  for (uint32_t v = count_; v-- > 0;) free_voqs_.push_back(v);  // VOQ 0 first
}

uint64_t VoqPool::bytes_for(const DstWindow& w) const {
  if (w.voq != kNoVoq) return voqs_[w.voq].bytes;
  return free_voqs_.empty() ? voqs_[w.dst % count_].bytes : 0;
}

uint32_t VoqPool::map(DstWindow& w) {
  uint32_t v;
  if (!free_voqs_.empty()) {
    v = free_voqs_.back();
    free_voqs_.pop_back();
    in_use_.add();
  } else {
    v = w.dst % count_;
    shared.add();
  }
  ++voqs_[v].users;
  w.voq = v;
  return v;
}

bool VoqPool::hold(DstWindow& w, const VoqPacket& p) {
  if (free_node_ == kNone) return false;
  const uint32_t v = w.voq != kNoVoq ? w.voq : map(w);
  const uint32_t n = free_node_;
  free_node_ = nodes_[n].next;
  nodes_[n] = Node{p, &w, kNone};
  Voq& q = voqs_[v];
  if (q.tail == kNone) {
    q.head = n;
    nonempty_[v >> 6] |= uint64_t{1} << (v & 63);
  } else {
    nodes_[q.tail].next = n;
  }
  q.tail = n;
  q.bytes += p.bytes;
  ++w.voq_packets;
  w.voq_bytes += p.bytes;
  held_.add();
  bytes_.add(p.bytes);
  return true;
}

bool VoqPool::try_send_head(DstWindows& windows, uint32_t v, VoqPacket* out) {
  const Node& n = nodes_[voqs_[v].head];
  DstWindow& w = *n.window;
  if (w.window < static_cast<int64_t>(n.packet.bytes)) return false;
  *out = n.packet;
  windows.debit(w, n.packet.bytes);
  pop(v);
  return true;
}

// The head leaves; its destination's mapping goes when it has nothing left
// here, and the VOQ returns to the pool when no destination maps it.
void VoqPool::pop(uint32_t v) {
  Voq& q = voqs_[v];
  const uint32_t n = q.head;
  const Node& node = nodes_[n];
  DstWindow& w = *node.window;
  const uint32_t bytes = node.packet.bytes;
  q.head = node.next;
  if (q.head == kNone) {
    q.tail = kNone;
    nonempty_[v >> 6] &= ~(uint64_t{1} << (v & 63));
  }
  q.bytes -= bytes;
  nodes_[n].next = free_node_;
  free_node_ = n;
  held_.sub();
  bytes_.sub(bytes);
  w.voq_bytes -= bytes;
  if (--w.voq_packets != 0) return;
  w.voq = kNoVoq;
  if (--q.users != 0) return;
  free_voqs_.push_back(v);
  in_use_.sub();
}

}  // namespace sluice
