// HPCC's window computation (Li et al., SIGCOMM 2019, section 3,
// Algorithm 1); see hpcc_control.h.
#include "lib/emulator/transport/hpcc/hpcc_control.h"

#include <algorithm>
#include <cmath>

namespace sluice {
namespace {

// Bytes a rate moves in t_ns.
double bytes_in(uint64_t rate_bps, uint64_t t_ns) {
  return static_cast<double>(rate_bps) * static_cast<double>(t_ns) / 8e9;
}

// b - a for an INT record's timestamp or transmitted bytes, which the wire
// carries modulo 2^32 (segment_wire.h); exact for unwrapped values too while
// two records of a hop are less than 2^32 ns or bytes apart.
uint64_t wrap_delta(uint64_t b, uint64_t a) {
  return static_cast<uint32_t>(static_cast<uint32_t>(b) - static_cast<uint32_t>(a));
}

// A timestamp difference this large is a record older than the last one
// (reordered feedback), not 2 s of progress.
constexpr uint64_t kOlderRecord = uint64_t{1} << 31;

}  // namespace

HpccControl::HpccControl(const HpccParams& params, const TransportContext& ctx)
    : params_(params),
      line_rate_bps_(ctx.link_rate_bps > 0 ? ctx.link_rate_bps : 1),
      min_rate_bps_(std::min(std::max<uint64_t>(params.min_rate_bps, 1), line_rate_bps_)),
      t_ns_(params.base_rtt_ns > 0 ? params.base_rtt_ns : std::max<uint64_t>(ctx.base_rtt_ns, 1)) {
  if (!(params_.eta > 0.0)) params_.eta = 0.95;
  if (params_.expected_flows == 0) params_.expected_flows = 1;
  w_max_ = bytes_in(line_rate_bps_, t_ns_);
  w_min_ = bytes_in(min_rate_bps_, t_ns_);
  // W_init (1 - eta) / N: what N flows may add per RTT in total without
  // using more than the headroom eta leaves.
  w_ai_ = params_.w_ai_bytes > 0
              ? params_.w_ai_bytes
              : w_max_ * std::max(0.0, 1.0 - params_.eta) / params_.expected_flows;
  w_ = w_max_;
  wc_ = w_max_;
}

uint64_t HpccControl::rate_bps() const {
  const double r = w_ * 8e9 / static_cast<double>(t_ns_);
  const uint64_t rate = static_cast<uint64_t>(std::llround(r));
  return std::clamp(rate, min_rate_bps_, line_rate_bps_);
}

uint64_t HpccControl::window_bytes() const {
  return std::max<uint64_t>(static_cast<uint64_t>(std::llround(w_)), 1);
}

void HpccControl::on_ack(uint64_t /*now_ns*/, const Segment& ack, const AckInfo& info) {
  react(ack, info);
}

void HpccControl::on_nack(uint64_t /*now_ns*/, const Segment& nack, const AckInfo& info) {
  react(nack, info);
}

void HpccControl::react(const Segment& ack, const AckInfo& info) {
  if (ack.int_hops == 0 || ack.int_hops > kMaxIntHops) return;  // nothing to measure
  if (!started_) {
    // The first feedback of the flow: the next per-RTT update waits for
    // what is sent from now on.
    started_ = true;
    last_update_seq_ = info.snd_nxt;
  }
  if (!have_hops_ || ack.int_hops != hop_count_) {
    // No previous record, or the path changed under us: the old records
    // belong to other ports, so this ACK only starts the new samples.
    have_hops_ = true;
    hop_count_ = ack.int_hops;
    std::copy_n(ack.hops.begin(), hop_count_, hops_.begin());
    return;
  }
  if (!measure(ack)) return;
  // ack.seq > lastUpdateSeq, read as the sender's cumulative point after
  // the ACK (the same for an in-order ACK, and 64-bit where the wire's
  // sequence field is 32).
  const bool per_rtt = info.snd_una > last_update_seq_;
  compute_window(per_rtt);
  // lastUpdateSeq = snd_nxt (only ever forward, as HPCC's ns-3 does).
  if (per_rtt) last_update_seq_ = std::max(last_update_seq_, info.snd_nxt);
}

bool HpccControl::measure(const Segment& ack) {
  const double t = static_cast<double>(t_ns_);
  double u_max = 0.0;
  uint64_t tau_ns = 0;
  bool any = false;
  for (uint32_t i = 0; i < hop_count_; ++i) {
    const IntHop& cur = ack.hops[i];
    IntHop& prev = hops_[i];
    const uint64_t dt_ns = wrap_delta(cur.ts_ns, prev.ts_ns);
    // The same record again, or an older one: no interval to measure over,
    // and the newer record stays the reference.
    if (dt_ns == 0 || dt_ns >= kOlderRecord) continue;
    if (cur.rate_mbps > 0) {  // a port with no rate gives no u
      const double b = static_cast<double>(cur.rate_mbps) / 8000.0;  // bytes per ns
      const double tx_rate =
          static_cast<double>(wrap_delta(cur.tx_bytes, prev.tx_bytes)) / static_cast<double>(dt_ns);
      const uint32_t qlen =
          params_.min_qlen ? std::min(cur.qlen_bytes, prev.qlen_bytes) : cur.qlen_bytes;
      const double u = static_cast<double>(qlen) / (b * t) + tx_rate / b;
      if (!any || u > u_max) {
        u_max = u;
        tau_ns = dt_ns;
      }
      any = true;
    }
    prev = cur;
  }
  if (!any) return false;
  // EWMA over the time the sample covers: a sample spanning a whole T
  // replaces U, a shorter one weighs tau / T.
  const double w = static_cast<double>(std::min(tau_ns, t_ns_)) / t;
  u_ = (1.0 - w) * u_ + w * u_max;
  return true;
}

void HpccControl::compute_window(bool update_reference) {
  double w = 0;
  const bool multiplicative = u_ >= params_.eta || inc_stage_ >= params_.max_stage;
  if (multiplicative) {
    // U of 0 (an idle path) would divide by 0: the window is then the cap.
    w = u_ > 0.0 ? wc_ * params_.eta / u_ + w_ai_ : w_max_;
  } else {
    w = wc_ + w_ai_;
  }
  w_ = std::clamp(w, w_min_, w_max_);
  if (update_reference) {
    wc_ = w_;
    inc_stage_ = multiplicative ? 0 : inc_stage_ + 1;
  }
}

}  // namespace sluice
