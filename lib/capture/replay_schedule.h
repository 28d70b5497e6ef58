#pragma once
// When each frame of a replayed capture is due. Paced mode maps capture time
// onto the data path's clock: frame i of pass k is due at
//   start + floor((k * pass_length + offset[i]) / speed)
// where offset[i] is the frame's capture time relative to the first frame and
// pass_length = duration + one average inter-frame gap (duration / (N - 1),
// rounded to the nanosecond), so a looped capture keeps its average rate
// across the wrap. Fast mode has no due times: every frame is ready at once.
// Frames are released in file order only; time is always an argument.

#include <cstddef>
#include <cstdint>
#include <vector>

#include "lib/config/config.h"

namespace sluice {

// Capture times relative to the first frame, never decreasing: a timestamp
// earlier than its predecessor's (reordered capture) counts as equal to it.
std::vector<uint64_t> capture_offsets(const std::vector<uint64_t>& timestamps_ns);

// Where a capture's first frame goes when several captures share one time
// origin: the earliest first timestamp of them all (origin_ts_ns) is due at
// start_ns, and a capture whose first frame is later starts that much later
// (divided by speed), so hosts keep their relative timing.
uint64_t first_frame_due_ns(uint64_t start_ns, uint64_t first_ts_ns, uint64_t origin_ts_ns,
                            double speed);

class ReplaySchedule {
 public:
  // offsets_ns as made by capture_offsets(); speed > 0 (paced mode only).
  ReplaySchedule(std::vector<uint64_t> offsets_ns, PcapReplayMode mode, bool loop, double speed);

  // Capture time 0 (the first frame) is due at start_ns. Nothing is ready before.
  void start(uint64_t start_ns);
  bool started() const { return started_; }

  // True once a non-looping schedule has released every frame (or is empty).
  bool done() const { return frames_ == 0 || (!loop_ && next_ >= frames_); }
  // The next frame may be released at now_ns.
  bool ready(uint64_t now_ns) const {
    return started_ && !done() && (mode_ == PcapReplayMode::kFast || due_ns_ <= now_ns);
  }
  size_t frame() const { return next_; }       // index of the next frame; valid unless done()
  uint64_t due_ns() const { return due_ns_; }  // its due time (start_ns in fast mode)
  uint64_t pass() const { return pass_; }      // completed passes over the capture
  void advance();                              // the next frame was released

  uint64_t pass_length_ns() const { return pass_length_ns_; }  // capture ns, gap included
  size_t size() const { return frames_; }

 private:
  uint64_t compute_due() const;

  std::vector<uint64_t> offsets_ns_;
  size_t frames_;
  PcapReplayMode mode_;
  bool loop_;
  double speed_;
  uint64_t pass_length_ns_ = 0;
  bool started_ = false;
  uint64_t start_ns_ = 0;
  uint64_t pass_ = 0;
  size_t next_ = 0;
  uint64_t due_ns_ = 0;
};

}  // namespace sluice
