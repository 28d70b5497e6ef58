#pragma once
// The flow list emulated transport hosts run: the flows.csv tools/workload
// writes (docs/workloads.md): a header line naming the columns, then one
// flow per line. The columns read are flow_id, src_ip, dst_ip, size (payload
// bytes) and arrival_time (seconds with up to nine decimals: when the
// application hands the flow to its transport); is_incast is kept for the
// results; any other column is ignored. Errors name the file, the line and
// the reason.

#include <cstdint>
#include <string>
#include <vector>

namespace sluice {

struct FlowListEntry {
  uint32_t id = 0;
  uint32_t src_ip = 0;  // host order
  uint32_t dst_ip = 0;
  uint64_t bytes = 0;
  uint64_t start_ns = 0;  // relative to the run's start
  bool incast = false;
  uint32_t line = 0;  // where it was read, for errors that come later
};

// The largest flow a transport's sequence space takes: its sequence numbers
// are 32-bit byte offsets on the wire (docs/wire-formats.md).
constexpr uint64_t kMaxFlowBytes = UINT32_MAX;

// Reads `path`; false with *error ("FILE:LINE: reason") on the first bad
// line: a missing column, a number that does not parse, a size of 0 or above
// kMaxFlowBytes, a flow from a host to itself, a repeated flow id.
bool read_flow_list(const std::string& path, std::vector<FlowListEntry>* out, std::string* error);
// The same from text (tests); `name` stands for the file in errors.
bool parse_flow_list(const std::string& text, const std::string& name,
                     std::vector<FlowListEntry>* out, std::string* error);

}  // namespace sluice
