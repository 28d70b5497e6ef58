#include "lib/tm/token_bucket_shaper.h"

#include <stdexcept>

namespace sluice {

namespace {
// Keeps tokens + one refill + one frame cost well inside int64.
constexpr unsigned __int128 kMaxBurstFine = static_cast<unsigned __int128>(1) << 60;
}  // namespace

TokenBucketShaper::TokenBucketShaper(uint64_t rate_bps, uint64_t burst_bytes,
                                     uint32_t overhead_bytes)
    : rate_bps_(rate_bps), burst_bytes_(burst_bytes), overhead_bytes_(overhead_bytes) {
  if (rate_bps == 0) return;
  if (rate_bps < kMinRateBps) {
    throw std::invalid_argument("token bucket shaper: rate below 1 Mb/s");
  }
  // 8e12 ps per byte-per-second, rounded to nearest in fixed point.
  unsigned __int128 num = static_cast<unsigned __int128>(8'000'000'000'000ull) << kFracBits;
  fine_per_byte_ = static_cast<uint64_t>((num + rate_bps / 2) / rate_bps);
  if (burst_bytes_ == 0) burst_bytes_ = 1;
  unsigned __int128 burst = static_cast<unsigned __int128>(burst_bytes_) * fine_per_byte_;
  if (burst > kMaxBurstFine) burst = kMaxBurstFine;
  burst_fine_ = static_cast<int64_t>(burst);
  uint64_t max_cost =
      (uint64_t{kMaxFrameBytes} + overhead_bytes_) * fine_per_byte_;  // < 2^60 at 1 Mb/s
  refill_cap_ns_ = (static_cast<uint64_t>(burst_fine_) + max_cost) / kFinePerNs + 1;
  tokens_ = burst_fine_;
}

}  // namespace sluice
