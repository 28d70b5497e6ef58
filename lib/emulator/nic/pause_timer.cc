#include "lib/emulator/nic/pause_timer.h"

namespace sluice {

void PauseTimer::apply(uint64_t at_ns, uint64_t length_ns) {
  if (open_ && at_ns < end_ns_) {  // a running pause: restart its timer
    end_ns_ = at_ns + length_ns;
    return;
  }
  if (open_) closed_ns_ += end_ns_ - start_ns_;
  open_ = false;
  if (length_ns == 0) return;  // resume while not paused: nothing to do
  open_ = true;
  start_ns_ = at_ns;
  end_ns_ = at_ns + length_ns;
}

}  // namespace sluice
