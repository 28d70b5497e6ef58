#pragma once
// A FIFO of TmPacket descriptors on a power-of-two ring. Single writer (the
// owning lcore); the depth (bytes, and packets as tail - head) is kept in
// relaxed atomics so the metrics scraper can read it from another thread.

#include <atomic>
#include <bit>
#include <cstdint>
#include <cstdlib>
#include <memory>
#include <new>

#include "lib/common/relaxed_counter.h"
#include "lib/tm/tm_packet.h"

namespace sluice {

class PacketQueue {
 public:
  PacketQueue() = default;
  explicit PacketQueue(uint32_t capacity) { init(capacity); }
  PacketQueue(const PacketQueue&) = delete;
  PacketQueue& operator=(const PacketQueue&) = delete;

  // Allocates the ring (capacity rounded up to a power of two, at least 1).
  // Cold: called once at construction; the queue must be empty. The slots
  // are not written here: a large ring's pages stay untouched until the
  // queue first reaches them (and an emptied queue starts again at slot 0),
  // so memory follows the deepest the queue has been, not its capacity.
  void init(uint32_t capacity) {
    uint32_t cap = std::bit_ceil(capacity == 0 ? 1u : capacity);
    ring_.reset(static_cast<TmPacket*>(std::malloc(sizeof(TmPacket) * cap)));
    if (!ring_) throw std::bad_alloc();
    mask_ = cap - 1;
    head_.store(0, std::memory_order_relaxed);
    tail_.store(0, std::memory_order_relaxed);
  }

  uint32_t capacity() const { return mask_ + 1; }
  uint32_t size() const { return tail_index() - head_index(); }
  bool empty() const { return tail_index() == head_index(); }
  bool full() const { return tail_index() - head_index() > mask_; }

  // Scraper-safe depth.
  uint64_t bytes() const { return bytes_.get(); }
  // Head first, so a concurrent reader sees head <= tail, or an old head
  // with a rewound tail (advance_head), which the clamp reads as empty.
  uint64_t packets() const {
    const uint32_t h = head_.load(std::memory_order_acquire);
    const uint32_t d = tail_index() - h;
    return d <= mask_ + uint64_t{1} ? d : 0;
  }

  // Caller checks full() first.
  void push(const TmPacket& p) {
    const uint32_t t = tail_index();
    ring_[t & mask_] = p;
    tail_.store(t + 1, std::memory_order_relaxed);
    bytes_.add(p.bytes);
  }
  // full() and push() in one for the enqueue fast path: p with its queue and
  // enqueue time set, written in place. The caller has read p.bytes and
  // bytes() (depth) already. False, and nothing changed, when full.
  bool try_push(const TmPacket& p, uint32_t bytes, uint64_t depth, uint16_t queue,
                uint64_t enqueue_ns) {
    const uint32_t t = tail_index();
    if (t - head_index() > mask_) return false;
    TmPacket& slot = ring_[t & mask_];
    slot = p;
    slot.queue = queue;
    slot.enqueue_ns = enqueue_ns;
    tail_.store(t + 1, std::memory_order_relaxed);
    bytes_.set(depth + bytes);
    return true;
  }
  const TmPacket& front() const { return ring_[head_index() & mask_]; }
  // Caller checks empty() first.
  TmPacket pop() {
    const uint32_t h = head_index();
    TmPacket p = ring_[h & mask_];
    bytes_.sub(p.bytes);
    advance_head(h + 1);
    return p;
  }

  // Batch form for the dequeue loop: read packets at(i) for running
  // indices head_index() <= i < tail_index(), then pop_run(i_end, their bytes).
  uint32_t head_index() const { return head_.load(std::memory_order_relaxed); }
  uint32_t tail_index() const { return tail_.load(std::memory_order_relaxed); }
  const TmPacket& at(uint32_t i) const { return ring_[i & mask_]; }
  // at() as ring + mask the loop can keep in registers.
  const TmPacket* ring() const { return ring_.get(); }
  uint32_t mask() const { return mask_; }
  void pop_run(uint32_t new_head, uint64_t bytes) {
    bytes_.sub(bytes);
    advance_head(new_head);
  }

 private:
  // A ring that has just become empty starts again at slot 0. Most queues
  // are empty or nearly so most of the time; rewound, each keeps reusing its
  // first few cache lines instead of walking the whole ring (4096 slots of
  // 24 bytes) through the cache, which with 32 queues in turn (BFC gives
  // each new flow its own empty queue) is megabytes per port. Tail first: a
  // scraper reads head then tail, and an old head with the new tail reads as
  // empty (packets() clamps), never as a full ring.
  void advance_head(uint32_t new_head) {
    if (new_head == tail_index()) {
      tail_.store(0, std::memory_order_relaxed);
      head_.store(0, std::memory_order_release);  // x86: a plain store
      return;
    }
    head_.store(new_head, std::memory_order_relaxed);
  }

  struct Free {
    void operator()(TmPacket* p) const { std::free(p); }
  };
  std::unique_ptr<TmPacket[], Free> ring_;
  uint32_t mask_ = 0;
  std::atomic<uint32_t> head_{0};  // running; wrap-around of the difference is fine; 0 when emptied
  std::atomic<uint32_t> tail_{0};
  RelaxedCounter bytes_;
};

}  // namespace sluice
