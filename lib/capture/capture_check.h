#pragma once
// What `sluice --check` verifies of the captures a configuration replays,
// without EAL: every capture port's rx file opens and parses as the replay
// will read it (lib/capture/pcap_reader.h), and frames too long for an mbuf
// (Config::mbuf_size) are pointed out, since the replay leaves them out.

#include <vector>

#include "lib/config/config.h"
#include "lib/config/config_loader.h"

namespace sluice {

struct CaptureCheck {
  // One per rx file that cannot be replayed, at its pcap.rx key:
  // "switch s1 port p0: cannot open x.pcap: No such file or directory".
  std::vector<ConfigError> errors;
  // One per rx file with frames longer than mbuf_size.
  std::vector<ConfigError> notes;
};

// Reads each rx file whole (relative paths from the current directory, as
// sluice opens them at start).
CaptureCheck check_captures(const Config& config);

}  // namespace sluice
