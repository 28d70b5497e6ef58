#pragma once
// One check of the Flowtune codec on arbitrary bytes, shared by the
// libFuzzer target (flowtune_fuzz.cc) and a unit test that feeds it mutated
// messages under gcc in every CI run (FlowtuneWireFuzz): whatever
// parse_flowtune accepts lies inside the input and builds again to the same
// bytes, reserved fields aside. Returns false on a violation.

#include <cstdint>
#include <vector>

#include "lib/mechanisms/flowtune/flowtune_wire.h"

namespace sluice {

inline bool check_flowtune_codec(const uint8_t* p, uint32_t len) {
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

}  // namespace sluice
