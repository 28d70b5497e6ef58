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
      nodes_(new Node[capacity_]),
      nonempty_(num_queues_),
      queue_by_key_(keyed_),
      q_(std::make_unique<Queue[]>(num_queues_)) {}

// A queue is taken by its owner while it holds frames, is held paused, or
// was active within the sticky time.
bool NicQueues::taken(uint32_t q, uint64_t now_ns, const QueueSet* held) const {
  const Queue& queue = q_[q];
  if (!queue.owned) return false;
  if (queue.count != 0 || (held != nullptr && held->test(q))) return true;
  return now_ns - queue.last_active_ns < sticky_ns_;
}

uint32_t NicQueues::queue_of(uint64_t key, uint64_t now_ns, const QueueSet* held) {
  const uint32_t q = queue_by_key_.find(key);
  if (q != KeyIndex::kAbsent && taken(q, now_ns, held)) return q;
  return assign(key, now_ns, held);
}

// The first free queue from the rotating start; it leaves its last owner.
uint32_t NicQueues::assign(uint64_t key, uint64_t now_ns, const QueueSet* held) {
  for (uint32_t i = 0; i < keyed_; ++i) {
    uint32_t q = search_start_ + i;
    if (q >= keyed_) q -= keyed_;
    if (taken(q, now_ns, held)) continue;
    search_start_ = q + 1 == keyed_ ? 0 : q + 1;
    Queue& queue = q_[q];
    if (queue.owned && queue_by_key_.find(queue.owner) == q) queue_by_key_.erase(queue.owner);
    queue_by_key_.erase(key);  // its last queue went free
    queue.owner = key;
    queue.owned = true;
    queue.last_active_ns = now_ns;
    queue_by_key_.insert(key, q);
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
  nonempty_.set(q);
  queue.last_active_ns = now_ns;
}

void NicQueues::pop(uint32_t q, uint64_t now_ns) {
  Queue& queue = q_[q];
  const uint32_t n = queue.head;
  queue.head = nodes_[n].next;
  if (queue.head == kNone) {
    queue.tail = kNone;
    nonempty_.reset(q);
  }
  nodes_[n].next = free_;
  free_ = n;
  --queue.count;
  --held_;
  queue.last_active_ns = now_ns;
}

}  // namespace sluice
