#include "lib/capture/capture_check.h"

#include <algorithm>
#include <string>

#include "lib/capture/pcap_reader.h"

namespace sluice {

CaptureCheck check_captures(const Config& config) {
  CaptureCheck out;
  for (size_t si = 0; si < config.switches.size(); ++si) {
    const SwitchConfig& s = config.switches[si];
    for (size_t pi = 0; pi < s.ports.size(); ++pi) {
      const PortConfig& p = s.ports[pi];
      if (!p.pcap || p.pcap->rx_path.empty()) continue;
      const std::string key =
          "switches[" + std::to_string(si) + "].ports[" + std::to_string(pi) + "].pcap.rx";
      const std::string who = "switch " + s.name + " port " + p.name + ": ";
      PcapCapture capture;
      std::string error;
      if (!read_pcap_file(p.pcap->rx_path, &capture, &error)) {
        out.errors.push_back(ConfigError{config.file, p.pcap->rx_line, key, who + error});
        continue;
      }
      uint64_t oversize = 0;
      uint32_t largest = 0;
      for (const PcapRecord& r : capture.records) {
        if (r.wire_len() <= config.mbuf_size) continue;
        ++oversize;
        largest = std::max(largest, r.wire_len());
      }
      if (oversize != 0) {
        out.notes.push_back(ConfigError{
            config.file, p.pcap->rx_line, key,
            who + std::to_string(oversize) + " frame(s) of " + p.pcap->rx_path + " (up to " +
                std::to_string(largest) + " bytes) are larger than mbuf_size (" +
                std::to_string(config.mbuf_size) +
                " bytes) and will be left out of the replay; raise mbuf_size to replay them"});
      }
    }
  }
  return out;
}

}  // namespace sluice
