#pragma once
// The send queues of an emulated host NIC: frames waiting to go on the wire,
// one FIFO per queue, a queue per key (a destination, or a flow: the caller
// computes the key), up to 4096 queues (an RDMA NIC's queue pair per flow).
// A key keeps the queue last assigned to it while the queue holds frames, is
// held (paused by the network), or was active within `sticky_ns`, so a flow
// neither overtakes itself nor escapes a pause by moving to another queue. A
// key without one takes a free queue (searched from a rotating start), or,
// when every queue is taken, shares queue key % queues (counted in
// collisions). The paper's NIC inserts this queue number into the frames it
// sends (BFC 3.3.2); host_nic.h does that and decides which queue sends next.
// Everything is sized by the queue count and capacity at construction: no
// allocation afterwards.

#include <cstdint>
#include <memory>
#include <vector>

#include "lib/common/key_index.h"
#include "lib/common/queue_set.h"
#include "lib/common/relaxed_counter.h"

namespace sluice {

struct NicFrame {
  uint64_t due_ns;   // when the application handed it to the NIC
  uint32_t id;       // the caller's frame number
  uint32_t bytes;    // on the wire (shim included), overhead excluded
  uint8_t priority;  // PFC class 0..7
  uint32_t dst_ip;   // IPv4 destination, host order; 0: not IPv4 (never held by dst pause)
  uint32_t rank;     // pFabric's priority, smaller first (read only by a NIC that serves by rank)
};

class NicQueues {
 public:
  static constexpr uint32_t kMaxQueues = QueueSet::kMaxSize;

  // queues 1..kMaxQueues; capacity >= 1 frames in all queues together. The
  // last `reserved` queues are never assigned to a key (the caller pushes
  // to them by number).
  NicQueues(uint32_t queues, uint32_t capacity, uint64_t sticky_ns, uint32_t reserved = 0);

  uint32_t num_queues() const { return num_queues_; }
  bool full() const { return held_ == capacity_; }
  uint32_t held() const { return held_; }
  uint32_t capacity() const { return capacity_; }

  // The queue `key` uses at now_ns (assigning one if it has none); `held`
  // (nullptr: none) says which queues the network holds paused (they stay
  // taken when empty).
  uint32_t queue_of(uint64_t key, uint64_t now_ns, const QueueSet* held);
  // Appends f to queue q (from queue_of; not full()).
  void push(uint32_t q, const NicFrame& f, uint64_t now_ns);
  const NicFrame& head(uint32_t q) const { return nodes_[q_[q].head].frame; }
  void pop(uint32_t q, uint64_t now_ns);
  const QueueSet& nonempty() const { return nonempty_; }
  uint32_t frames(uint32_t q) const { return q_[q].count; }

  RelaxedCounter collisions;  // keys that found no free queue and shared one

 private:
  static constexpr uint32_t kNone = UINT32_MAX;
  struct Node {
    NicFrame frame;
    uint32_t next;
  };
  bool taken(uint32_t q, uint64_t now_ns, const QueueSet* held) const;
  uint32_t assign(uint64_t key, uint64_t now_ns, const QueueSet* held);

  uint32_t num_queues_;
  uint32_t keyed_;  // the queues keys are assigned: 0..keyed_-1
  uint32_t capacity_;
  uint64_t sticky_ns_;
  std::unique_ptr<Node[]> nodes_;  // capacity_ of them
  uint32_t free_ = kNone;          // nodes used and given back, a list
  uint32_t fresh_ = 0;             // nodes_[fresh_..] never used yet
  uint32_t held_ = 0;
  QueueSet nonempty_;
  KeyIndex queue_by_key_;  // key -> the queue last assigned to it, while it owns it
  uint32_t search_start_ = 0;
  // Everything about one queue in 32 bytes: what a push, a pop or a key's
  // lookup reads of it shares one cache line.
  struct Queue {
    uint32_t head = kNone;  // nodes_ index (kNone: empty)
    uint32_t tail = kNone;
    uint32_t count = 0;
    bool owned = false;  // owner is meaningful
    uint64_t owner = 0;  // the key the queue was last assigned to
    uint64_t last_active_ns = 0;
  };
  static_assert(sizeof(Queue) == 32);
  std::unique_ptr<Queue[]> q_;
};

}  // namespace sluice
