#include "lib/emulator/transport/dcqcn/dcqcn_mlx_control.h"

#include <algorithm>

namespace sluice {

DcqcnMlxControl::DcqcnMlxControl(const DcqcnParams& params, const TransportContext& ctx)
    : params_(params),
      line_rate_(static_cast<double>(std::max<uint64_t>(ctx.link_rate_bps, 1))),
      min_rate_(std::min(static_cast<double>(params.min_rate_bps), line_rate_)),
      rc_(line_rate_),
      rt_(line_rate_) {
  params_.alpha_interval_ns = std::max<uint64_t>(params_.alpha_interval_ns, 1);
  params_.decrease_interval_ns = std::max<uint64_t>(params_.decrease_interval_ns, 1);
}

uint64_t DcqcnMlxControl::rate_bps() const {
  return std::max<uint64_t>(static_cast<uint64_t>(rc_), 1);
}

bool DcqcnMlxControl::at_line_rate() const { return rt_ >= line_rate_ && line_rate_ - rc_ < 1.0; }

void DcqcnMlxControl::advance_alpha(uint64_t now_ns) {
  const double keep = 1.0 - params_.g;
  while (alpha_tick_ns_ <= now_ns) {
    if (alpha_cnp_) {
      alpha_ = keep * alpha_ + params_.g;
      alpha_cnp_ = false;
      alpha_tick_ns_ += params_.alpha_interval_ns;
      continue;
    }
    // Updates without a CNP between them: one decay each, as their clock
    // applies them (stopping once alpha has decayed to nothing).
    const uint64_t n = (now_ns - alpha_tick_ns_) / params_.alpha_interval_ns + 1;
    for (uint64_t k = 0; k < n && alpha_ != 0.0; ++k) alpha_ *= keep;
    alpha_tick_ns_ += n * params_.alpha_interval_ns;
  }
}

double DcqcnMlxControl::alpha_at(uint64_t now_ns) {
  advance_alpha(now_ns);
  return alpha_;
}

void DcqcnMlxControl::on_cnp(uint64_t now_ns, const Segment& /*cnp*/) {
  if (!started_) {
    started_ = true;
    alpha_ = 1.0;
    alpha_tick_ns_ = now_ns + params_.alpha_interval_ns;
    decrease_origin_ns_ = now_ns + params_.decrease_interval_ns + 1;
    decrease_cnp_ = true;
    decrease_due_ns_ = decrease_origin_ns_;
    return;
  }
  advance_alpha(now_ns);  // updates before this CNP did not see it
  alpha_cnp_ = true;
  if (!decrease_cnp_) {
    decrease_cnp_ = true;
    const uint64_t p = params_.decrease_interval_ns;
    decrease_due_ns_ = now_ns <= decrease_origin_ns_
                           ? decrease_origin_ns_
                           : decrease_origin_ns_ + (now_ns - decrease_origin_ns_ + p - 1) / p * p;
  }
}

void DcqcnMlxControl::decrease(uint64_t at_ns) {
  advance_alpha(at_ns);
  ++cuts_;
  if (params_.clamp_target_rate || stage_ != 0) rt_ = rc_;
  rc_ = std::max(min_rate_, rc_ * (1.0 - alpha_ / 2.0));
  stage_ = 0;
  decrease_cnp_ = false;
  decrease_due_ns_ = kTransportNever;
  increase_due_ns_ = params_.rate_timer_ns != 0 ? at_ns + params_.rate_timer_ns : kTransportNever;
}

void DcqcnMlxControl::increase() {
  const uint32_t f = params_.fast_recovery_stages;
  if (stage_ < f) {
    ++fast_recoveries_;
  } else if (stage_ == f) {
    ++additive_;
    rt_ = std::min(rt_ + static_cast<double>(params_.rate_ai_bps), line_rate_);
  } else {
    ++hyper_;
    rt_ = std::min(rt_ + static_cast<double>(params_.rate_hai_bps), line_rate_);
  }
  rc_ = rc_ / 2.0 + rt_ / 2.0;
  ++stage_;
  if (at_line_rate()) {
    rc_ = line_rate_;
    increase_due_ns_ = kTransportNever;  // nothing left to raise until a cut
  }
}

void DcqcnMlxControl::on_ack(uint64_t /*now_ns*/, const Segment& ack, const AckInfo& /*info*/) {
  if (params_.ue_aware) ue_held_ = ack.ue_echo;
}

void DcqcnMlxControl::on_nack(uint64_t /*now_ns*/, const Segment& nack, const AckInfo& /*info*/) {
  if (params_.ue_aware) ue_held_ = nack.ue_echo;
}

uint64_t DcqcnMlxControl::timer_due_ns() const {
  return std::min(decrease_due_ns_, increase_due_ns_);
}

void DcqcnMlxControl::on_timer(uint64_t now_ns) {
  // In time order; at the same instant the increase goes first (their
  // event queue runs the one scheduled earlier, 900 us before, first).
  while (std::min(decrease_due_ns_, increase_due_ns_) <= now_ns) {
    if (increase_due_ns_ <= decrease_due_ns_) {
      increase_due_ns_ += params_.rate_timer_ns;
      if (ue_held_) {
        ++held_;
        continue;
      }
      increase();
    } else {
      decrease(decrease_due_ns_);
    }
  }
}

}  // namespace sluice
