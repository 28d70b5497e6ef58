// libFuzzer target for the Flowtune codec (lib/flowtune/flowtune_wire.h).
// Whatever parse_flowtune accepts must lie inside the input and build again
// to the same bytes, reserved fields aside. The same check runs on mutated
// messages in the unit tests (FlowtuneWireFuzz) under gcc in every CI run.
#include <cstdint>
#include <cstdlib>
#include <vector>

#include "lib/flowtune/flowtune_wire.h"

namespace {

using namespace sluice;

bool check_flowtune_codec(const uint8_t* p, uint32_t len) {
  FlowtuneMessage m;
  if (parse_flowtune(p, len, &m) != FlowtuneParseResult::kOk) return true;
  if (m.entries != p + kFlowtuneHeaderLen) return false;
  if (kFlowtuneHeaderLen + uint64_t{m.count} * flowtune_entry_len(m.type) != len) return false;
  std::vector<uint8_t> again(len);
  uint32_t n = 0;
  switch (m.type) {
    case FlowtuneType::kFlowletStart: {
      std::vector<FlowletStart> e(m.count);
      for (uint32_t i = 0; i < m.count; ++i) e[i] = m.flowlet_start(i);
      n = build_flowlet_start(again.data(), len, e);
      break;
    }
    case FlowtuneType::kFlowletEnd: {
      std::vector<FlowletEnd> e(m.count);
      for (uint32_t i = 0; i < m.count; ++i) e[i] = m.flowlet_end(i);
      n = build_flowlet_end(again.data(), len, e);
      break;
    }
    case FlowtuneType::kRateUpdate: {
      std::vector<RateUpdate> e(m.count);
      for (uint32_t i = 0; i < m.count; ++i) e[i] = m.rate_update(i);
      n = build_rate_update(again.data(), len, e);
      break;
    }
  }
  if (n != len) return false;
  for (uint32_t i = 0; i < len; ++i) {
    const bool reserved =
        i == 6 || i == 7 || (m.type == FlowtuneType::kFlowletStart && i >= 8 && (i - 8) % 16 >= 14);
    if (!reserved && again[i] != p[i]) return false;
  }
  return true;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size > 0xFFFF) return 0;  // more than one UDP datagram holds
  // An exactly-sized heap copy: any read past the end is an ASan report.
  std::vector<uint8_t> msg(data, data + size);
  if (!check_flowtune_codec(msg.data(), static_cast<uint32_t>(size))) std::abort();
  return 0;
}
