#pragma once
// A FIFO of TmPacket descriptors on a power-of-two ring. Single writer (the
// owning lcore); depth counters are RelaxedCounters so the metrics scraper can
// read them from another thread.

#include <bit>
#include <cstdint>
#include <memory>

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
  // Cold: called once at construction; the queue must be empty.
  void init(uint32_t capacity) {
    uint32_t cap = std::bit_ceil(capacity == 0 ? 1u : capacity);
    ring_ = std::make_unique<TmPacket[]>(cap);
    mask_ = cap - 1;
    head_ = tail_ = 0;
  }

  uint32_t capacity() const { return mask_ + 1; }
  uint32_t size() const { return tail_ - head_; }
  bool empty() const { return tail_ == head_; }
  bool full() const { return tail_ - head_ > mask_; }

  // Scraper-safe depth.
  uint64_t bytes() const { return bytes_.get(); }
  uint64_t packets() const { return packets_.get(); }

  // Caller checks full() first.
  void push(const TmPacket& p) {
    ring_[tail_++ & mask_] = p;
    bytes_.add(p.bytes);
    packets_.add(1);
  }
  const TmPacket& front() const { return ring_[head_ & mask_]; }
  // Caller checks empty() first.
  TmPacket pop() {
    TmPacket p = ring_[head_++ & mask_];
    bytes_.sub(p.bytes);
    packets_.sub(1);
    return p;
  }

 private:
  std::unique_ptr<TmPacket[]> ring_;
  uint32_t mask_ = 0;
  uint32_t head_ = 0;  // free-running; wrap-around of the difference is fine
  uint32_t tail_ = 0;
  RelaxedCounter bytes_;
  RelaxedCounter packets_;
};

}  // namespace sluice
