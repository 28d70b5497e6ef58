#include "lib/mechanisms/pfc/pfc_ingress.h"

#include <algorithm>
#include <cmath>
#include <stdexcept>

namespace sluice {

uint32_t build_decision_frame(const PfcDecision& d, uint8_t* out, uint32_t cap,
                              const MacAddr& src) {
  if (d.pause) return build_pause_frame(out, cap, src, d.quanta[0]);
  return build_pfc_frame(out, cap, src, d.class_enable, d.quanta);
}

PfcIngress::PfcIngress(const PfcIngressConfig& cfg) : cfg_(cfg) {
  if (cfg.mode != PfcMode::kOff) {
    if (cfg.rate_bps == 0) throw std::invalid_argument("pfc: the port needs a link rate");
    if (cfg.xoff_quanta == 0) throw std::invalid_argument("pfc: xoff quanta must be > 0");
    if (!std::isfinite(cfg.dynamic_alpha) || cfg.dynamic_alpha < 0) {
      throw std::invalid_argument("pfc: dynamic alpha must be finite and >= 0");
    }
    if (cfg.dynamic_alpha == 0 && cfg.xoff_bytes == 0) {
      throw std::invalid_argument("pfc: xoff threshold must be > 0");
    }
  }
  alpha_fp_ = static_cast<uint64_t>(std::llround(cfg.dynamic_alpha * (1u << kAlphaFracBits)));
  pause_ns_ = cfg.rate_bps != 0 ? quanta_to_ns(cfg.xoff_quanta, cfg.rate_bps) : 0;
  refresh_after_ns_ = pause_ns_ / 2;
}

uint64_t PfcIngress::threshold(uint64_t free_bytes) const {
  if (alpha_fp_ == 0) return cfg_.xoff_bytes;
  return static_cast<uint64_t>((static_cast<unsigned __int128>(free_bytes) * alpha_fp_) >>
                               kAlphaFracBits);
}

uint64_t PfcIngress::xon_level(uint64_t free_bytes) const {
  const uint64_t thr = threshold(free_bytes);
  return thr > cfg_.hysteresis_bytes ? thr - cfg_.hysteresis_bytes : 0;
}

void PfcIngressBytes::on_enqueue(uint8_t prio, uint32_t bytes, uint64_t reserve,
                                 uint64_t threshold, PfcPoolUse& pool) {
  const uint64_t before = bytes_[prio & 7].get();
  const uint64_t after = before + bytes;
  if (after > reserve && after - reserve > threshold) {
    headroom_[prio & 7].add(bytes);
    pool.headroom.add(bytes);
    return;
  }
  bytes_[prio & 7].add(bytes);
  pool.reserved.add(std::min(after, reserve) - std::min(before, reserve));
}

void PfcIngressBytes::on_dequeue(uint8_t prio, uint32_t bytes, uint64_t reserve,
                                 PfcPoolUse& pool) {
  const uint64_t from_headroom = std::min<uint64_t>(headroom_[prio & 7].get(), bytes);
  headroom_[prio & 7].sub(from_headroom);
  pool.headroom.sub(from_headroom);
  const uint64_t rest = bytes - from_headroom;
  const uint64_t before = bytes_[prio & 7].get();
  const uint64_t after = before > rest ? before - rest : 0;
  bytes_[prio & 7].sub(rest);
  pool.reserved.sub(std::min(before, reserve) - std::min(after, reserve));
}

bool PfcIngress::poll_pause(uint64_t now_ns, uint64_t shared, bool in_headroom, uint64_t thr,
                            uint64_t xon, PfcDecision* out) const {
  const bool off = xoff_[kAllPriorities];
  uint16_t quanta;
  if (!off && (in_headroom || shared > thr)) {
    quanta = cfg_.xoff_quanta;
  } else if (off && !in_headroom && shared <= xon) {
    quanta = 0;
  } else if (off && now_ns >= refresh_at_ns_[kAllPriorities]) {
    quanta = cfg_.xoff_quanta;
  } else {
    return false;
  }
  *out = PfcDecision{};
  out->pause = true;
  out->quanta[0] = quanta;
  return true;
}

bool PfcIngress::poll(uint64_t now_ns, const std::array<uint64_t, kPfcClasses>& bytes,
                      const std::array<uint64_t, kPfcClasses>& headroom, uint64_t free_bytes,
                      PfcDecision* out) const {
  if (cfg_.mode == PfcMode::kOff) return false;
  const uint64_t thr = threshold(free_bytes);
  const uint64_t xon = thr > cfg_.hysteresis_bytes ? thr - cfg_.hysteresis_bytes : 0;
  if (cfg_.mode == PfcMode::kPause) {
    uint64_t in_shared = 0, room = 0;
    for (uint32_t c = 0; c < kPfcClasses; ++c) {
      in_shared += shared(bytes[c]);
      room += headroom[c];
    }
    return poll_pause(now_ns, in_shared, room != 0, thr, xon, out);
  }
  uint8_t due = 0;   // classes that force a frame now
  uint8_t held = 0;  // classes staying in XOFF (refreshed by any frame)
  std::array<uint16_t, kPfcClasses> quanta{};
  for (uint32_t c = 0; c < kPfcClasses; ++c) {
    const uint8_t bit = static_cast<uint8_t>(1u << c);
    if (!(cfg_.priorities & bit)) continue;
    const uint64_t in_shared = shared(bytes[c]);
    if (!xoff_[c]) {
      if (headroom[c] != 0 || in_shared > thr) {
        due |= bit;
        quanta[c] = cfg_.xoff_quanta;
      }
    } else if (headroom[c] == 0 && in_shared <= xon) {
      due |= bit;  // XON: quanta 0
    } else {
      held |= bit;
      quanta[c] = cfg_.xoff_quanta;
      if (now_ns >= refresh_at_ns_[c]) due |= bit;
    }
  }
  if (due == 0) return false;
  out->pause = false;
  out->class_enable = due | held;
  out->quanta = quanta;
  return true;
}

void PfcIngress::commit(uint32_t slot, uint16_t quanta, uint64_t now_ns) {
  stats_.sent[slot].add(1);
  if (quanta != 0) {
    if (!xoff_[slot]) stats_.xoff[slot].add(1);
    xoff_[slot] = true;
    refresh_at_ns_[slot] = now_ns + refresh_after_ns_;
  } else {
    if (xoff_[slot]) stats_.xon[slot].add(1);
    xoff_[slot] = false;
  }
}

void PfcIngress::on_sent(const PfcDecision& d, uint64_t now_ns) {
  stats_.frames_sent.add(1);
  if (d.pause) return commit(kAllPriorities, d.quanta[0], now_ns);
  for (uint32_t c = 0; c < kPfcClasses; ++c) {
    if ((d.class_enable >> c) & 1) commit(c, d.quanta[c], now_ns);
  }
}

uint64_t PfcIngress::next_refresh_ns() const {
  uint64_t t = UINT64_MAX;
  for (uint32_t s = 0; s < kPfcSlots; ++s) {
    if (xoff_[s] && refresh_at_ns_[s] < t) t = refresh_at_ns_[s];
  }
  return t;
}

}  // namespace sluice
