#pragma once
// The bytes of pcap records on their way from the lcore that transmits a
// frame to the thread that writes the capture file. A single-producer,
// single-consumer byte ring: the producer (a worker lcore) encodes each
// record whole or not at all, and never waits; when the writer has fallen so
// far behind that a record does not fit, the record is left out and counted,
// so the data path never stalls on the disk. The consumer takes contiguous
// chunks and hands them to a file.

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <memory>

#include "lib/common/relaxed_counter.h"

namespace sluice {

class CaptureRing {
 public:
  // capacity_bytes is rounded up to a power of two. snaplen: bytes of each
  // frame kept (the record still says how long the frame was).
  CaptureRing(size_t capacity_bytes, uint32_t snaplen);

  // Producer. Starts a record of a frame of frame_len bytes at ts_ns (ns
  // since the Unix epoch); false (and counted in dropped()) if it does not
  // fit, and then the append() calls of this record do nothing.
  bool begin_record(uint64_t ts_ns, uint32_t frame_len);
  // Whether a record of a frame of frame_len bytes fits now (a producer
  // that must not lose records drains the ring itself when not: exact
  // fabric time, where no writer thread runs).
  bool fits(uint32_t frame_len) const;
  // The frame's bytes, in one or more pieces; the record is published once
  // its last kept byte is appended.
  void append(const void* data, uint32_t len);

  // Consumer: calls sink(const uint8_t*, size_t) with what has been
  // published, in at most two contiguous pieces; returns the bytes taken.
  template <typename Sink>
  size_t drain(Sink&& sink);

  uint64_t records() const { return records_.get(); }
  uint64_t dropped() const { return dropped_.get(); }
  size_t capacity() const { return mask_ + 1; }

 private:
  void put(const void* data, size_t len);

  std::unique_ptr<uint8_t[]> bytes_;
  size_t mask_;
  uint32_t snaplen_;
  // Producer state: where the record being written ends up, and how much of
  // the current frame is still to be kept (0: no record open, or it was
  // refused).
  uint64_t write_pos_ = 0;
  uint32_t capture_left_ = 0;
  alignas(64) std::atomic<uint64_t> head_{0};  // published by the producer
  alignas(64) std::atomic<uint64_t> tail_{0};  // released by the consumer
  RelaxedCounter records_, dropped_;
};

template <typename Sink>
size_t CaptureRing::drain(Sink&& sink) {
  const uint64_t tail = tail_.load(std::memory_order_relaxed);
  const uint64_t head = head_.load(std::memory_order_acquire);
  if (head == tail) return 0;
  const size_t n = static_cast<size_t>(head - tail);
  const size_t at = static_cast<size_t>(tail & mask_);
  const size_t first = n < capacity() - at ? n : capacity() - at;
  sink(bytes_.get() + at, first);
  if (first < n) sink(bytes_.get(), n - first);
  tail_.store(head, std::memory_order_release);
  return n;
}

}  // namespace sluice
