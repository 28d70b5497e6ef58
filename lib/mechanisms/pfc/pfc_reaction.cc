#include "lib/mechanisms/pfc/pfc_reaction.h"

#include <bit>
#include <stdexcept>

namespace sluice {

PfcReaction::PfcReaction(const PfcReactionConfig& cfg) : cfg_(cfg) {
  if (cfg.mode != PfcMode::kOff && cfg.rate_bps == 0) {
    throw std::invalid_argument("pfc: the port needs a link rate");
  }
}

bool PfcReaction::receive(const uint8_t* body, uint32_t len, uint64_t now_ns, EgressPort* port) {
  MacControlFrame f;
  if (!parse_mac_control(body, len, &f)) {
    stats_.invalid.add(1);
    return false;
  }
  apply(f, now_ns, port);
  return true;
}

void PfcReaction::apply(const MacControlFrame& f, uint64_t now_ns, EgressPort* port) {
  stats_.frames_received.add(1);
  const PfcMode wanted = f.is_pause() ? PfcMode::kPause : PfcMode::kPfc;
  if (cfg_.mode != wanted) {
    stats_.ignored.add(1);
    return;
  }
  if (f.is_pause()) {
    stats_.received[kAllPriorities].add(1);
    const uint64_t until = update(kAllPriorities, f.quanta[0], now_ns);
    if (until != 0) {
      port->pause_port(until);
    } else {
      port->resume_port();
    }
    return;
  }
  apply_pfc(f, now_ns, port);
}

void PfcReaction::apply_pfc(const MacControlFrame& f, uint64_t now_ns, EgressPort* port) {
  const uint8_t classes = f.class_enable & cfg_.priorities;
  uint64_t touched = 0;
  for (uint32_t c = 0; c < kPfcClasses; ++c) {
    if (!((classes >> c) & 1)) continue;
    stats_.received[c].add(1);
    update(c, f.quanta[c], now_ns);
    touched |= cfg_.class_queues[c];
  }
  sync_queues(touched, now_ns, port);
}

// A queue shared by several classes (fewer than 8 queues) stays paused until
// the last of their pauses ends.
void PfcReaction::sync_queues(uint64_t queues, uint64_t now_ns, EgressPort* port) const {
  const uint32_t n = port->num_queues();
  if (n < 64) queues &= (uint64_t{1} << n) - 1;  // a mapping for more queues than the port has
  for (uint64_t m = queues; m != 0; m &= m - 1) {
    const unsigned q = static_cast<unsigned>(std::countr_zero(m));
    uint64_t until = 0;
    for (uint32_t c = 0; c < kPfcClasses; ++c) {
      const Interval& iv = iv_[c];
      if (((cfg_.class_queues[c] >> q) & 1) && iv.open && iv.until_ns > now_ns &&
          iv.until_ns > until) {
        until = iv.until_ns;
      }
    }
    if (until != 0) {
      port->pause_queue(static_cast<uint16_t>(q), until);
    } else {
      port->resume_queue(static_cast<uint16_t>(q));
    }
  }
}

void PfcReaction::close_expired(uint32_t slot, uint64_t now_ns) {
  Interval& iv = iv_[slot];
  if (iv.open && iv.until_ns <= now_ns) {
    stats_.paused_ns[slot].add(iv.until_ns - iv.start_ns);
    iv.open = false;
  }
}

uint64_t PfcReaction::update(uint32_t slot, uint16_t quanta, uint64_t now_ns) {
  close_expired(slot, now_ns);
  Interval& iv = iv_[slot];
  if (quanta == 0) {
    if (iv.open) {
      stats_.paused_ns[slot].add(now_ns - iv.start_ns);
      iv.open = false;
    }
    return 0;
  }
  if (!iv.open) {
    iv.open = true;
    iv.start_ns = now_ns;
  }
  iv.until_ns = now_ns + quanta_to_ns(quanta, cfg_.rate_bps);
  return iv.until_ns;
}

uint64_t PfcReaction::paused_ns(uint32_t slot, uint64_t now_ns) const {
  const Interval& iv = iv_[slot];
  uint64_t total = stats_.paused_ns[slot].get();
  if (iv.open && now_ns > iv.start_ns) {
    total += (now_ns < iv.until_ns ? now_ns : iv.until_ns) - iv.start_ns;
  }
  return total;
}

void PfcReaction::settle(uint64_t now_ns) {
  for (uint32_t s = 0; s < kPfcSlots; ++s) {
    close_expired(s, now_ns);
    Interval& iv = iv_[s];
    if (iv.open && now_ns > iv.start_ns) {
      stats_.paused_ns[s].add(now_ns - iv.start_ns);
      iv.start_ns = now_ns;
    }
  }
}

}  // namespace sluice
