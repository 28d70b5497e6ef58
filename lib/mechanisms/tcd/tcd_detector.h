#pragma once
// TCD's congestion detector for one data queue of an egress port, OFF while
// its PFC class or, under BFC, the queue itself is paused (SPEC 4.4;
// docs/mechanisms/tcd.md, "ON and OFF", "State machine").
//
// ON/OFF: OFF while the downstream holds the queue paused (PFC, PAUSE or BFC;
// the caller ORs its sources), ON otherwise. T_on = time since the last
// OFF -> ON. A queue that was never OFF has an unbounded T_on, so with no
// pause ever it is congested exactly when queue > q_th: DCTCP's step rule.
//
// State machine, applied at each evaluation (state()):
//  - every ON -> OFF: undetermined;
//  - undetermined stays while OFF, or ON with T_on <= max_T_on;
//  - undetermined, ON, T_on > max_T_on: congestion if queue > q_th, else
//    non-congestion (timed at the instant T_on passes max_T_on, judged on
//    the queue last evaluated);
//  - non-congestion -> congestion when ON, T_on > max_T_on, queue > q_th;
//  - congestion -> non-congestion when queue <= q_th;
//  - option queue_falling (sluice's addition, off by default): undetermined
//    -> non-congestion when ON and the queue is falling, i.e. below the
//    queue sampled at least falling_interval earlier in this ON period.
//
// Observability: time in each state (exact: every ns since construction is
// charged to one state), transitions, pauses, and a histogram of ON
// periods, each recorded at the ON -> OFF that ends it.
//
// Single writer (the lcore owning the port); the scraper reads stats().
// Time is an argument and never goes backwards (an earlier now counts as
// the latest seen). No allocation; nothing here throws.

#include <cstdint>

#include "lib/common/relaxed_counter.h"
#include "lib/mechanisms/tcd/tcd_state.h"
#include "lib/tm/latency_histogram.h"

namespace sluice {

struct TcdParams {
  uint64_t q_th_bytes = 0;   // congestion when the queue holds more than this
  uint64_t max_t_on_ns = 0;  // longest ON period a pause-built queue can explain
  bool queue_falling = false;
  uint64_t falling_interval_ns = 0;  // span between the samples the falling test compares
};

struct TcdStats {
  // Settled time per state (index_of(state)); see settle().
  RelaxedCounter time_ns[kTcdStates];
  // transitions[from][to]; the diagonal stays 0.
  RelaxedCounter transitions[kTcdStates][kTcdStates];
  RelaxedCounter pauses;  // ON -> OFF
  // ON periods (OFF -> ON to the next ON -> OFF). The ON time before the
  // first pause is not one: it did not start with a resume.
  LatencyHistogram on_periods;
};

class TcdDetector {
 public:
  // Starts ON, never paused, non-congestion, with an empty queue.
  TcdDetector(const TcdParams& params, uint64_t now_ns);
  TcdDetector(const TcdDetector&) = delete;
  TcdDetector& operator=(const TcdDetector&) = delete;

  // Moves the start of time to now_ns (later than the constructor's): a
  // detector built before its clock runs charges nothing before this. Only
  // before any other call.
  void start(uint64_t now_ns) {
    if (now_ns > latest_ns_) since_ns_ = latest_ns_ = now_ns;
  }

  // ON -> OFF (no-op while OFF: a refreshed pause is not a new one).
  void on_pause(uint64_t now_ns);
  // OFF -> ON (no-op while ON). A pause that expired may be given its
  // expiry time, if not earlier than the latest time seen.
  void on_resume(uint64_t now_ns);
  void set_paused(bool paused, uint64_t now_ns) {
    if (paused) {
      on_pause(now_ns);
    } else {
      on_resume(now_ns);
    }
  }

  // Evaluates the state machine with the queue's bytes now and returns the
  // state to mark by. The data path calls it at each dequeue from the queue
  // (with the bytes the packet leaves behind) and from its TCD timer.
  TcdState state(uint64_t now_ns, uint64_t queue_bytes) {
    now_ns = observe(now_ns);
    advance(now_ns);
    switch (state_) {
      case TcdState::kUndetermined:
        if (!off_ && params_.queue_falling && falling(now_ns, queue_bytes))
          move_to(TcdState::kNonCongestion, now_ns);
        break;
      case TcdState::kNonCongestion:
        if (!off_ && queue_bytes > params_.q_th_bytes && t_on_exceeds(now_ns))
          move_to(TcdState::kCongestion, now_ns);
        break;
      case TcdState::kCongestion:
        if (queue_bytes <= params_.q_th_bytes) move_to(TcdState::kNonCongestion, now_ns);
        break;
    }
    last_queue_bytes_ = queue_bytes;
    return state_;
  }

  // When the state machine next changes with no packet or pause: an
  // undetermined queue that is ON leaves undetermined once T_on exceeds
  // max_T_on (UINT64_MAX otherwise). Exact fabric time evaluates it then.
  uint64_t next_due_ns() const {
    if (state_ != TcdState::kUndetermined || off_ || !ever_off_) return UINT64_MAX;
    return undetermined_end_ns() + 1;
  }

  // The state as last evaluated (no time passes).
  TcdState last_state() const { return state_; }
  bool off() const { return off_; }
  const TcdParams& params() const { return params_; }

  // Exact time spent in `s` up to now_ns, including the unsettled part.
  uint64_t time_in_ns(TcdState s, uint64_t now_ns) const;
  // Folds the time up to now_ns into stats().time_ns (monotonic). Call it
  // from the owner's timer loop before a scrape may read.
  void settle(uint64_t now_ns);
  const TcdStats& stats() const { return stats_; }

 private:
  uint64_t observe(uint64_t now_ns) {
    if (now_ns > latest_ns_) latest_ns_ = now_ns;
    return latest_ns_;
  }
  // T_on > max_T_on (always, for a queue never paused).
  bool t_on_exceeds(uint64_t now_ns) const {
    return !ever_off_ || now_ns - on_since_ns_ > params_.max_t_on_ns;
  }
  // Undetermined and ON past max_T_on: when it stopped being undetermined.
  bool undetermined_expired(uint64_t now_ns) const {
    return state_ == TcdState::kUndetermined && !off_ && t_on_exceeds(now_ns);
  }
  uint64_t undetermined_end_ns() const { return on_since_ns_ + params_.max_t_on_ns; }
  TcdState expiry_target() const {
    return last_queue_bytes_ > params_.q_th_bytes ? TcdState::kCongestion
                                                  : TcdState::kNonCongestion;
  }
  // Leaves undetermined at the instant T_on passed max_T_on.
  void advance(uint64_t now_ns) {
    if (undetermined_expired(now_ns)) [[unlikely]]
      move_to(expiry_target(), undetermined_end_ns());
  }
  void charge(uint64_t until_ns) {
    if (until_ns <= since_ns_) return;
    stats_.time_ns[index_of(state_)].add(until_ns - since_ns_);
    since_ns_ = until_ns;
  }
  void move_to(TcdState s, uint64_t at_ns) {
    charge(at_ns);
    stats_.transitions[index_of(state_)][index_of(s)].add(1);
    state_ = s;
  }
  bool falling(uint64_t now_ns, uint64_t queue_bytes);

  TcdParams params_;
  TcdState state_ = TcdState::kNonCongestion;
  bool off_ = false;
  bool ever_off_ = false;
  uint64_t on_since_ns_ = 0;  // last OFF -> ON (valid once ever_off_)
  uint64_t since_ns_;         // time before this is charged to a state
  uint64_t latest_ns_;
  uint64_t last_queue_bytes_ = 0;
  // Falling test: the queue sampled this ON period, and when.
  bool sample_valid_ = false;
  uint64_t sample_bytes_ = 0;
  uint64_t sample_ns_ = 0;
  TcdStats stats_;
};

}  // namespace sluice
