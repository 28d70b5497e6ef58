#include "lib/tm/shared_buffer.h"

#include <cmath>
#include <stdexcept>

namespace sluice {

SharedBuffer::SharedBuffer(uint64_t capacity_bytes, double alpha) : capacity_(capacity_bytes) {
  // Up to 2^40: far beyond any sensible alpha, and keeps the product in range.
  if (!(alpha > 0.0) || !std::isfinite(alpha) || alpha > 1099511627776.0) {
    throw std::invalid_argument("shared buffer: alpha must be positive and finite");
  }
  alpha_fp_ = static_cast<uint64_t>(std::llround(alpha * (1ull << kAlphaFracBits)));
  if (alpha_fp_ == 0) alpha_fp_ = 1;
}

}  // namespace sluice
