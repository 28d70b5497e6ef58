#pragma once
// TCD on one egress port (docs/mechanisms/tcd.md, "In the data path"): a
// detector per data queue, the port's marker, and the pause state last seen,
// so that the port's pauses reach the detectors as ON/OFF transitions.
//
// The data path calls track_pauses() once per loop pass with the queues its
// traffic manager holds paused, mark() for each data packet leaving, and
// tick() from its timer. Pauses are seen at most one pass late: a pause
// starts (or a resume by frame ends one) when track_pauses() first sees it;
// a pause that ran out of time ends at its expiry, which the caller passes.
//
// Single writer (the lcore owning the port); the scraper reads the sums.

#include <algorithm>
#include <cstdint>
#include <memory>
#include <vector>

#include "lib/mechanisms/tcd/tcd_detector.h"
#include "lib/mechanisms/tcd/tcd_marking.h"

namespace sluice {

class TcdPort {
 public:
  // num_queues in 1..64 (the traffic manager's data queues).
  TcdPort(const TcdParams& params, TcdCodepoints cp, uint32_t num_queues, uint64_t now_ns);

  // The data path's clock starts at now_ns (see TcdDetector::start).
  void start(uint64_t now_ns) {
    for (auto& d : queues_) d->start(now_ns);
    seen_ns_ = now_ns;
  }

  uint32_t num_queues() const { return static_cast<uint32_t>(queues_.size()); }
  const TcdDetector& detector(uint32_t q) const { return *queues_[q]; }

  // `paused` has bit q set for each data queue held paused now.
  // resumed_at(q, since) is when queue q's pause ended, for a queue paused
  // at the last call (at `since`) and not now. Cheap when nothing changed.
  template <class ResumedAt>
  void track_pauses(uint64_t paused, uint64_t now_ns, ResumedAt&& resumed_at) {
    const uint64_t changed = paused ^ paused_;
    const uint64_t since = seen_ns_;
    seen_ns_ = now_ns;
    if (changed == 0) [[likely]]
      return;
    for (uint64_t m = changed; m != 0; m &= m - 1) {
      const unsigned q = static_cast<unsigned>(__builtin_ctzll(m));
      if (q >= queues_.size()) continue;
      if ((paused >> q) & 1) {
        queues_[q]->on_pause(now_ns);
      } else {
        queues_[q]->on_resume(resumed_at(q, since));
      }
    }
    paused_ = paused;
  }

  // The ECN field (two bits) a packet of queue q leaves with, the queue
  // holding queue_bytes once it has left.
  uint8_t mark(uint32_t q, uint64_t now_ns, uint64_t queue_bytes, uint8_t ecn) {
    if ((ecn & 0b11) == 0) return ecn;  // Not-ECT: nothing to evaluate
    return marker_.mark(queues_[q]->state(now_ns, queue_bytes), ecn);
  }

  // Timer: every detector evaluated with its queue's bytes now (an idle
  // queue leaves undetermined on time), its time settled for the scraper.
  template <class QueueBytes>
  void tick(uint64_t now_ns, QueueBytes&& queue_bytes) {
    for (uint32_t q = 0; q < queues_.size(); ++q) {
      queues_[q]->state(now_ns, queue_bytes(q));
      queues_[q]->settle(now_ns);
    }
  }

  // The earliest of the detectors' next_due_ns(): when tick() next changes
  // a state with no packet or pause (exact fabric time calls it then).
  uint64_t next_due_ns() const {
    uint64_t due = UINT64_MAX;
    for (const auto& d : queues_) due = std::min(due, d->next_due_ns());
    return due;
  }

  // Sums over the port's queues, for the report and the scraper.
  uint64_t time_ns(TcdState s) const;
  uint64_t transitions(TcdState from, TcdState to) const;
  uint64_t pauses() const;
  // Adds every queue's ON-period histogram into h.
  void add_on_periods(LatencyHistogram* h) const;
  const TcdMarker& marker() const { return marker_; }

 private:
  std::vector<std::unique_ptr<TcdDetector>> queues_;
  TcdMarker marker_;
  uint64_t paused_ = 0;
  uint64_t seen_ns_ = 0;  // the last track_pauses()
};

}  // namespace sluice
