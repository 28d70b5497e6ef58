#include "lib/tm/disciplines/ecn_marker.h"

#include <cmath>
#include <stdexcept>

namespace sluice {

EcnMarker::EcnMarker(const EcnConfig& cfg, uint64_t seed)
    : mode_(cfg.mode),
      step_k_(cfg.step_k_bytes),
      red_min_(cfg.red_min_bytes),
      red_max_(cfg.red_max_bytes),
      rng_(seed) {
  if (mode_ == EcnMode::kStep) lowest_marked_ = step_k_ == UINT64_MAX ? UINT64_MAX : step_k_ + 1;
  if (mode_ == EcnMode::kRed) lowest_marked_ = red_min_;
  if (mode_ != EcnMode::kRed) return;
  if (red_max_ <= red_min_) throw std::invalid_argument("ecn red: max must exceed min");
  if (!(cfg.red_pmax >= 0.0 && cfg.red_pmax <= 1.0)) {
    throw std::invalid_argument("ecn red: pmax must be within [0, 1]");
  }
  double scale = std::ldexp(cfg.red_pmax, 32 + kSlopeFracBits);
  red_slope_ =
      static_cast<uint64_t>(std::llround(scale / static_cast<double>(red_max_ - red_min_)));
}

}  // namespace sluice
