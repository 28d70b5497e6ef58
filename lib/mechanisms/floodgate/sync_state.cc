#include "lib/mechanisms/floodgate/sync_state.h"

namespace sluice {

void SyncSender::on_sent(uint32_t port, uint32_t dst, uint32_t bytes) {
  if (Pair* p = pairs_.find(port, dst, true)) {
    p->sent += bytes;
  } else {
    untracked.add();
  }
}

void SyncSender::on_credit(uint32_t port, uint32_t dst, uint32_t bytes) {
  if (Pair* p = pairs_.find(port, dst, true)) {
    p->credit_received += bytes;
  } else {
    untracked.add();
  }
}

uint32_t SyncSender::entries(uint32_t port, uint32_t* cursor, SyncEntry* out, uint32_t max) {
  uint32_t n = 0;
  pairs_.visit(port, cursor, [&](uint32_t dst, const Pair& p) {
    if (n == max) return false;
    out[n++] = SyncEntry{dst, p.sent, p.credit_received};
    return true;
  });
  return n;
}

// A new pair starts with a sample "nothing credited as of now".
SyncReceiver::Pair* SyncReceiver::pair(uint32_t port, uint32_t dst, uint64_t now_ns) {
  bool added = false;
  Pair* p = pairs_.find(port, dst, true, &added);
  if (p == nullptr) {
    untracked.add();
    return nullptr;
  }
  if (added) p->samples[0] = Sample{now_ns, 0};
  return p;
}

void SyncReceiver::on_received(uint32_t port, uint32_t dst, uint32_t bytes, uint64_t now_ns) {
  if (Pair* p = pair(port, dst, now_ns)) p->received += bytes;
}

// Samples are kept at least cut/3 apart, so kSamples of them reach back
// past the cut.
void SyncReceiver::on_credit_sent(uint32_t port, uint32_t dst, uint32_t bytes, uint64_t now_ns) {
  Pair* p = pair(port, dst, now_ns);
  if (p == nullptr) return;
  if (now_ns >= p->samples[p->newest].t_ns + cut_ns_ / 3) {
    p->newest = (p->newest + 1) % kSamples;
    p->samples[p->newest] = Sample{now_ns, p->credited};
  }
  p->credited += bytes;
  p->last_credit_ns = now_ns;
}

// Credit sent before `cut`: all of it when nothing went since; otherwise
// the newest sample at or before the cut (0 when none reaches back).
uint64_t SyncReceiver::credited_at(const Pair& p, uint64_t cut) const {
  if (p.last_credit_ns < cut) return p.credited;
  uint64_t best = 0;
  uint64_t best_t = 0;
  for (const Sample& s : p.samples) {
    if (s.t_ns <= cut && s.t_ns >= best_t && s.credited >= best) {
      best = s.credited;
      best_t = s.t_ns;
    }
  }
  return best;
}

SyncHeal SyncReceiver::on_sync(uint32_t port, const SyncEntry& e, uint64_t now_ns) {
  Pair* p = pair(port, e.dst_ip, now_ns);
  if (p == nullptr) return {};
  SyncHeal heal;
  if (e.bytes_sent > p->received) {
    heal.lost_data_bytes = e.bytes_sent - p->received;
    p->received = e.bytes_sent;
  } else if (e.bytes_sent < p->received) {
    sync_behind.add();
  }
  const uint64_t cut = now_ns > cut_ns_ ? now_ns - cut_ns_ : 0;
  const uint64_t sent_by_cut = credited_at(*p, cut);
  const uint64_t missing = sent_by_cut > e.credit_received ? sent_by_cut - e.credit_received : 0;
  if (missing > p->resent) {
    heal.lost_credit_bytes = missing - p->resent;
    p->resent = missing;
  }
  healed_data_bytes.add(heal.lost_data_bytes);
  healed_credit_bytes.add(heal.lost_credit_bytes);
  return heal;
}

}  // namespace sluice
