#include "lib/emulator/transport/dcqcn/dcqcn_control.h"

#include <algorithm>

namespace sluice {

DcqcnControl::DcqcnControl(const DcqcnParams& params, const TransportContext& ctx)
    : params_(params),
      line_rate_(static_cast<double>(std::max<uint64_t>(ctx.link_rate_bps, 1))),
      min_rate_(std::min(static_cast<double>(params.min_rate_bps), line_rate_)),
      rc_(line_rate_),
      rt_(line_rate_),
      alpha_(params.initial_alpha) {}

uint64_t DcqcnControl::rate_bps() const {
  return std::max<uint64_t>(static_cast<uint64_t>(rc_), 1);
}

bool DcqcnControl::at_line_rate() const {
  // RC only approaches RT by halving the gap; under 1 bps is there.
  return rt_ >= line_rate_ && line_rate_ - rc_ < 1.0;
}

void DcqcnControl::on_cnp(uint64_t now_ns, const Segment& /*cnp*/) {
  ++cuts_;
  // The paper remembers RC as the target at every cut; without clamping
  // (HPCC's default) only a cut after some increase does.
  if (params_.clamp_target_rate || !cut_once_ || t_stage_ + b_stage_ > 0) rt_ = rc_;
  rc_ = std::max(min_rate_, rc_ * (1.0 - alpha_ / 2.0));
  alpha_ = (1.0 - params_.g) * alpha_ + params_.g;
  cut_once_ = true;
  t_stage_ = 0;
  b_stage_ = 0;
  bytes_since_ = 0;
  alpha_due_ns_ =
      params_.alpha_interval_ns != 0 ? now_ns + params_.alpha_interval_ns : kTransportNever;
  increase_due_ns_ = (params_.rate_timer_ns != 0 && !at_line_rate())
                         ? now_ns + params_.rate_timer_ns
                         : kTransportNever;
}

void DcqcnControl::increase() {
  const uint32_t f = params_.fast_recovery_stages;
  const uint32_t hi = std::max(t_stage_, b_stage_);
  const uint32_t lo = std::min(t_stage_, b_stage_);
  if (hi <= f) {
    ++fast_recoveries_;
  } else if (lo > f) {
    ++hyper_;
    rt_ += static_cast<double>(lo - f) * static_cast<double>(params_.rate_hai_bps);
  } else {
    ++additive_;
    rt_ += static_cast<double>(params_.rate_ai_bps);
  }
  rt_ = std::min(rt_, line_rate_);
  rc_ = (rt_ + rc_) / 2.0;
  if (at_line_rate()) rc_ = line_rate_;
}

void DcqcnControl::on_send(uint64_t /*now_ns*/, uint32_t bytes) {
  if (!cut_once_ || ue_held_ || params_.byte_counter_bytes == 0 || at_line_rate()) return;
  bytes_since_ += bytes;
  while (bytes_since_ >= params_.byte_counter_bytes) {
    bytes_since_ -= params_.byte_counter_bytes;
    ++b_stage_;
    increase();
    if (at_line_rate()) {
      bytes_since_ = 0;
      increase_due_ns_ = kTransportNever;
      break;
    }
  }
}

void DcqcnControl::take_ue(const Segment& s) {
  if (params_.ue_aware) ue_held_ = s.ue_echo;
}

void DcqcnControl::on_ack(uint64_t /*now_ns*/, const Segment& ack, const AckInfo& /*info*/) {
  take_ue(ack);
}

void DcqcnControl::on_nack(uint64_t /*now_ns*/, const Segment& nack, const AckInfo& /*info*/) {
  take_ue(nack);
}

uint64_t DcqcnControl::timer_due_ns() const { return std::min(alpha_due_ns_, increase_due_ns_); }

void DcqcnControl::on_timer(uint64_t now_ns) {
  // Each elapsed period is taken in turn, so a late call catches up exactly.
  while (alpha_due_ns_ <= now_ns) {
    alpha_ *= 1.0 - params_.g;
    alpha_due_ns_ += params_.alpha_interval_ns;
  }
  while (increase_due_ns_ <= now_ns) {
    increase_due_ns_ += params_.rate_timer_ns;
    if (ue_held_) {
      ++held_;
      continue;
    }
    ++t_stage_;
    increase();
    if (at_line_rate()) increase_due_ns_ = kTransportNever;
  }
}

}  // namespace sluice
