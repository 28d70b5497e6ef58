#include "lib/emulator/nic/nic_queues.h"

#include <algorithm>

namespace sluice {

NicQueues::NicQueues(uint32_t queues, uint32_t capacity, uint64_t sticky_ns, uint32_t reserved)
    : num_queues_(std::clamp<uint32_t>(queues, 1, kMaxQueues)),
      keyed_(num_queues_ > reserved ? num_queues_ - reserved : 1),
      capacity_(std::max<uint32_t>(capacity, 1)),
      sticky_ns_(sticky_ns),
      // Left uninitialised: a node is written when first used, so a host's
      // memory follows the frames it holds, not its capacity.
      nodes_(new Node[capacity_]) {}

// A queue is taken by its owner while it holds frames, is held paused, or
// was active within the sticky time.
bool NicQueues::taken(uint32_t q, uint64_t now_ns, uint64_t held_mask) const {
  if (!((owned_ >> q) & 1)) return false;
  if (q_[q].count != 0 || ((held_mask >> q) & 1)) return true;
  return now_ns - q_[q].last_active_ns < sticky_ns_;
}

// The lowest taken queue the key owns. Only the live queues and the held
// ones can be taken. A live queue found free with its last activity behind
// it leaves the live set: only a push or an assignment makes it taken again,
// as time only moves on. (A pop dates activity at the frame's start, which
// may be ahead of now.)
uint32_t NicQueues::queue_of(uint64_t key, uint64_t now_ns, uint64_t held_mask) {
  for (uint64_t m = (live_ | held_mask) & owned_; m != 0; m &= m - 1) {
    const uint32_t q = static_cast<uint32_t>(__builtin_ctzll(m));
    if (!taken(q, now_ns, held_mask)) {
      if (now_ns >= q_[q].last_active_ns) live_ &= ~(uint64_t{1} << q);
      continue;
    }
    if (q_[q].owner == key) return q;
  }
  return assign(key, now_ns, held_mask);
}

uint32_t NicQueues::assign(uint64_t key, uint64_t now_ns, uint64_t held_mask) {
  for (uint32_t i = 0; i < keyed_; ++i) {
    const uint32_t q = (search_start_ + i) % keyed_;
    if (taken(q, now_ns, held_mask)) continue;
    search_start_ = (q + 1) % keyed_;
    q_[q].owner = key;
    owned_ |= uint64_t{1} << q;
    live_ |= uint64_t{1} << q;
    q_[q].last_active_ns = now_ns;
    return q;
  }
  collisions.add();
  return static_cast<uint32_t>(key % keyed_);
}

void NicQueues::push(uint32_t q, const NicFrame& f, uint64_t now_ns) {
  uint32_t n = free_;
  if (n != kNone)
    free_ = nodes_[n].next;
  else
    n = fresh_++;  // not full(): fresh_ < capacity_
  nodes_[n] = {f, kNone};
  Queue& queue = q_[q];
  if (queue.tail == kNone)
    queue.head = n;
  else
    nodes_[queue.tail].next = n;
  queue.tail = n;
  ++queue.count;
  ++held_;
  nonempty_ |= uint64_t{1} << q;
  live_ |= uint64_t{1} << q;
  queue.last_active_ns = now_ns;
}

void NicQueues::pop(uint32_t q, uint64_t now_ns) {
  Queue& queue = q_[q];
  const uint32_t n = queue.head;
  queue.head = nodes_[n].next;
  if (queue.head == kNone) {
    queue.tail = kNone;
    nonempty_ &= ~(uint64_t{1} << q);
  }
  nodes_[n].next = free_;
  free_ = n;
  --queue.count;
  --held_;
  queue.last_active_ns = now_ns;
}

}  // namespace sluice
