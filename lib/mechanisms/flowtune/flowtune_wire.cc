#include "lib/mechanisms/flowtune/flowtune_wire.h"

#include <algorithm>

namespace sluice {

namespace {

// Checks the size, writes the header; returns where the entries start, or
// nullptr when the message does not fit.
uint8_t* start_message(uint8_t* out, uint32_t cap, FlowtuneType type, size_t count, uint32_t* len) {
  if (count > kFlowtuneMaxCount) return nullptr;
  // 64-bit: count * entry size cannot overflow before the comparison.
  const uint64_t need = kFlowtuneHeaderLen + uint64_t{count} * flowtune_entry_len(type);
  if (need > cap) return nullptr;
  out[0] = kFlowtuneMagic0;
  out[1] = kFlowtuneMagic1;
  out[2] = kFlowtuneVersion;
  out[3] = static_cast<uint8_t>(type);
  store_be16(out + 4, static_cast<uint16_t>(count));
  out[6] = out[7] = 0;  // reserved
  *len = static_cast<uint32_t>(need);
  return out + kFlowtuneHeaderLen;
}

}  // namespace

uint32_t flowtune_entry_len(FlowtuneType type) {
  switch (type) {
    case FlowtuneType::kFlowletStart:
      return kFlowletStartEntryLen;
    case FlowtuneType::kFlowletEnd:
      return kFlowletEndEntryLen;
    case FlowtuneType::kRateUpdate:
      return kRateUpdateEntryLen;
  }
  return 0;
}

uint32_t flowtune_entries_per_payload(FlowtuneType type, uint32_t budget) {
  const uint32_t entry_len = flowtune_entry_len(type);
  if (entry_len == 0 || budget < kFlowtuneHeaderLen) return 0;
  return std::min((budget - kFlowtuneHeaderLen) / entry_len, kFlowtuneMaxCount);
}

uint32_t build_flowlet_start(uint8_t* out, uint32_t cap, std::span<const FlowletStart> entries) {
  for (const FlowletStart& s : entries) {
    if (s.weight == 0) return 0;
  }
  uint32_t len = 0;
  uint8_t* e = start_message(out, cap, FlowtuneType::kFlowletStart, entries.size(), &len);
  if (e == nullptr) return 0;
  for (const FlowletStart& s : entries) {
    store_be32(e, s.flow_id);
    store_be32(e + 4, s.src_ip);
    store_be32(e + 8, s.dst_ip);
    store_be16(e + 12, s.weight);
    e[14] = e[15] = 0;  // reserved
    e += kFlowletStartEntryLen;
  }
  return len;
}

uint32_t build_flowlet_end(uint8_t* out, uint32_t cap, std::span<const FlowletEnd> entries) {
  uint32_t len = 0;
  uint8_t* e = start_message(out, cap, FlowtuneType::kFlowletEnd, entries.size(), &len);
  if (e == nullptr) return 0;
  for (const FlowletEnd& f : entries) {
    store_be32(e, f.flow_id);
    e += kFlowletEndEntryLen;
  }
  return len;
}

uint32_t build_rate_update(uint8_t* out, uint32_t cap, std::span<const RateUpdate> entries) {
  uint32_t len = 0;
  uint8_t* e = start_message(out, cap, FlowtuneType::kRateUpdate, entries.size(), &len);
  if (e == nullptr) return 0;
  for (const RateUpdate& r : entries) {
    store_be32(e, r.flow_id);
    store_be32(e + 4, r.rate_kbps);
    e += kRateUpdateEntryLen;
  }
  return len;
}

FlowtuneParseResult parse_flowtune(const uint8_t* p, uint32_t len, FlowtuneMessage* out) {
  if (len < kFlowtuneHeaderLen) return FlowtuneParseResult::kTooShort;
  if (p[0] != kFlowtuneMagic0 || p[1] != kFlowtuneMagic1) return FlowtuneParseResult::kBadMagic;
  if (p[2] != kFlowtuneVersion) return FlowtuneParseResult::kBadVersion;
  const uint8_t type = p[3];
  if (type < static_cast<uint8_t>(FlowtuneType::kFlowletStart) ||
      type > static_cast<uint8_t>(FlowtuneType::kRateUpdate)) {
    return FlowtuneParseResult::kUnknownType;
  }
  const uint16_t count = load_be16(p + 4);
  // p[6..7] reserved: ignored, so a later sender may use them.
  const uint8_t* entries = p + kFlowtuneHeaderLen;
  const uint32_t entry_len = flowtune_entry_len(static_cast<FlowtuneType>(type));
  // A UDP datagram has exact bounds: anything but the exact size means the
  // sender's layout is not ours. Compared in 64 bits, no overflow.
  if (uint64_t{kFlowtuneHeaderLen} + uint64_t{count} * entry_len != len) {
    return FlowtuneParseResult::kCountMismatch;
  }
  if (type == static_cast<uint8_t>(FlowtuneType::kFlowletStart)) {
    // Weight 0 would divide by zero in H_l = sum x^2 / w; refuse the message.
    for (uint32_t i = 0; i < count; ++i) {
      if (load_be16(entries + i * kFlowletStartEntryLen + 12) == 0) {
        return FlowtuneParseResult::kZeroWeight;
      }
    }
  }
  out->version = p[2];
  out->type = static_cast<FlowtuneType>(type);
  out->count = count;
  out->entries = entries;
  return FlowtuneParseResult::kOk;
}

}  // namespace sluice
