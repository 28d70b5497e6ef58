#include "lib/capture/capture_ring.h"

#include <algorithm>
#include <bit>

namespace sluice {
namespace {

constexpr size_t kRecordHeaderBytes = 16;  // ts_sec, ts_nsec, caplen, origlen

}  // namespace

CaptureRing::CaptureRing(size_t capacity_bytes, uint32_t snaplen)
    : mask_(std::bit_ceil(std::max<size_t>(capacity_bytes, 4096)) - 1),
      snaplen_(std::max<uint32_t>(1, snaplen)) {
  bytes_ = std::make_unique<uint8_t[]>(mask_ + 1);
  // Touch every page now: a first-touch page fault on the data path is a stall.
  std::memset(bytes_.get(), 0, mask_ + 1);
}

bool CaptureRing::fits(uint32_t frame_len) const {
  const uint32_t caplen = std::min(frame_len, snaplen_);
  const uint64_t used = write_pos_ - tail_.load(std::memory_order_acquire);
  return used + kRecordHeaderBytes + caplen <= capacity();
}

bool CaptureRing::begin_record(uint64_t ts_ns, uint32_t frame_len) {
  const uint32_t caplen = std::min(frame_len, snaplen_);
  const uint64_t used = write_pos_ - tail_.load(std::memory_order_acquire);
  if (used + kRecordHeaderBytes + caplen > capacity()) {
    dropped_.add();
    capture_left_ = 0;
    return false;
  }
  const uint32_t h[4] = {static_cast<uint32_t>(ts_ns / 1'000'000'000),
                         static_cast<uint32_t>(ts_ns % 1'000'000'000), caplen, frame_len};
  put(h, sizeof h);
  capture_left_ = caplen;
  records_.add();
  if (caplen == 0) head_.store(write_pos_, std::memory_order_release);
  return true;
}

void CaptureRing::append(const void* data, uint32_t len) {
  if (capture_left_ == 0) return;
  const uint32_t n = std::min(len, capture_left_);
  put(data, n);
  capture_left_ -= n;
  if (capture_left_ == 0) head_.store(write_pos_, std::memory_order_release);
}

void CaptureRing::put(const void* data, size_t len) {
  const size_t at = static_cast<size_t>(write_pos_ & mask_);
  const size_t first = std::min(len, capacity() - at);
  std::memcpy(bytes_.get() + at, data, first);
  if (first < len)
    std::memcpy(bytes_.get(), static_cast<const uint8_t*>(data) + first, len - first);
  write_pos_ += len;
}

}  // namespace sluice
