// TIMELY's Algorithm 1 (Mittal et al., SIGCOMM 2015, section 4) and the
// TCD paper's UE-aware hold (Zhang et al., SIGCOMM 2021, section 5.2.3); see
// timely_control.h.
#include "lib/emulator/transport/timely/timely_control.h"

#include <algorithm>
#include <cmath>

namespace sluice {

TimelyControl::TimelyControl(const TimelyParams& params, const TransportContext& ctx)
    : params_(params),
      line_rate_(static_cast<double>(ctx.link_rate_bps > 0 ? ctx.link_rate_bps : 1)),
      min_rate_(
          std::min(static_cast<double>(std::max<uint64_t>(params.min_rate_bps, 1)), line_rate_)) {
  if (params_.min_rtt_ns == 0) params_.min_rtt_ns = 1;
  rate_ = params_.initial_rate_bps > 0 ? static_cast<double>(params_.initial_rate_bps) : line_rate_;
  rate_ = std::clamp(rate_, min_rate_, line_rate_);
}

uint64_t TimelyControl::rate_bps() const { return static_cast<uint64_t>(std::llround(rate_)); }

void TimelyControl::on_ack(uint64_t now_ns, const Segment& ack, const AckInfo& info) {
  completion(now_ns, ack, info);
}

void TimelyControl::on_nack(uint64_t now_ns, const Segment& nack, const AckInfo& info) {
  completion(now_ns, nack, info);
}

void TimelyControl::completion(uint64_t now_ns, const Segment& ack, const AckInfo& info) {
  if (params_.completion_bytes > 0) {
    const uint64_t chunk = info.snd_una / params_.completion_bytes;
    if (chunk <= last_chunk_) return;  // no further chunk completed
    last_chunk_ = chunk;
  }
  if (now_ns < ack.ts_ns) return;  // not a sample of this clock
  const uint64_t rtt = now_ns - ack.ts_ns;
  ++events_;
  if (!have_rtt_) {
    // No previous RTT, so no difference yet: the first sample only seeds.
    have_rtt_ = true;
    prev_rtt_ns_ = rtt;
    return;
  }
  const double new_rtt_diff = static_cast<double>(rtt) - static_cast<double>(prev_rtt_ns_);
  prev_rtt_ns_ = rtt;
  rtt_diff_ns_ = (1.0 - params_.alpha) * rtt_diff_ns_ + params_.alpha * new_rtt_diff;
  const double gradient = rtt_diff_ns_ / static_cast<double>(params_.min_rtt_ns);
  neg_events_ = gradient <= 0.0 ? neg_events_ + 1 : 0;
  // UE: the delay came from a port that was only paused. CE on the same
  // data means a congested port too, so CE wins.
  const bool ue = params_.ue_aware && ack.ue_echo && !ack.ece;

  const double delta = static_cast<double>(params_.delta_bps);
  if (rtt < params_.t_low_ns) {
    rate_ += delta;
  } else if (rtt > params_.t_high_ns) {
    if (ue && params_.ue_hold_above_t_high) {
      ++ue_holds_;
    } else {
      const double excess = 1.0 - static_cast<double>(params_.t_high_ns) / static_cast<double>(rtt);
      rate_ *= std::max(0.0, 1.0 - params_.beta * excess);
    }
  } else if (gradient <= 0.0) {
    const double n = neg_events_ > params_.hai_after ? params_.hai_factor : 1.0;
    rate_ += n * delta;
  } else if (ue) {
    ++ue_holds_;
  } else {
    // beta g above 1 (a steep rise, or TCD's beta 1.6) would make the rate
    // negative: it stops at the minimum instead.
    rate_ *= std::max(0.0, 1.0 - params_.beta * gradient);
  }
  rate_ = std::clamp(rate_, min_rate_, line_rate_);
}

}  // namespace sluice
