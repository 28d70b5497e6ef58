#pragma once
// Flowtune messages between edge switches and the allocator (SPEC §5): the
// UDP payload only, sent to the allocator's port 9750. docs/wire-formats.md
// ("Flowtune") gives the byte layout, the type numbers and error handling.
//
// Builders write header + entries into the caller's buffer and never write
// at or beyond out + cap. The parser reads only [p, p + len). Neither
// allocates.

#include <cstdint>
#include <span>
#include <string_view>

#include "lib/net/byte_order.h"

namespace sluice {

inline constexpr uint16_t kFlowtunePort = 9750;
inline constexpr uint8_t kFlowtuneMagic0 = 'F';
inline constexpr uint8_t kFlowtuneMagic1 = 'T';
inline constexpr uint8_t kFlowtuneVersion = 1;
// magic (2), version, type, count (2), reserved (2)
inline constexpr uint32_t kFlowtuneHeaderLen = 8;
// IPv4 (20) and UDP (8) headers around each datagram, counted in the
// update traffic the allocator reports.
inline constexpr uint32_t kFlowtuneIpUdpHeaderLen = 20 + 8;
// UDP payload of one datagram in a 1500-byte IPv4 packet.
inline constexpr uint32_t kFlowtuneMtuPayload = 1500 - kFlowtuneIpUdpHeaderLen;
inline constexpr uint32_t kFlowtuneMaxCount = 0xFFFF;

// The SPEC names the types without numbers; these are sluice's.
enum class FlowtuneType : uint8_t {
  kFlowletStart = 1,
  kFlowletEnd = 2,
  kRateUpdate = 3,
};

// Bytes per entry on the wire.
// flow id (4), src IPv4 (4), dst IPv4 (4), weight (2), reserved (2)
inline constexpr uint32_t kFlowletStartEntryLen = 16;
inline constexpr uint32_t kFlowletEndEntryLen = 4;  // flow id (4)
inline constexpr uint32_t kRateUpdateEntryLen = 8;  // flow id (4), rate kbit/s (4)

// Addresses are in host byte order here, network order on the wire.
struct FlowletStart {
  uint32_t flow_id;
  uint32_t src_ip;
  uint32_t dst_ip;
  uint16_t weight;  // never 0 (the allocator divides by it)
};
struct FlowletEnd {
  uint32_t flow_id;
};
struct RateUpdate {
  uint32_t flow_id;
  uint32_t rate_kbps;
};

enum class FlowtuneParseResult : uint8_t {
  kOk,
  kTooShort,       // fewer than the 8 header bytes
  kBadMagic,       // not 'F' 'T'
  kBadVersion,     // version other than 1
  kUnknownType,    // type 0 or above 3
  kCountMismatch,  // length is not exactly 8 + count * entry size
  kZeroWeight,     // a FLOWLET_START entry with weight 0
  kCount
};

inline constexpr unsigned kFlowtuneParseResultCount =
    static_cast<unsigned>(FlowtuneParseResult::kCount);

// Stable names, for counters labelled by reason.
constexpr std::string_view flowtune_parse_result_name(FlowtuneParseResult r) {
  switch (r) {
    case FlowtuneParseResult::kOk:
      return "ok";
    case FlowtuneParseResult::kTooShort:
      return "too_short";
    case FlowtuneParseResult::kBadMagic:
      return "bad_magic";
    case FlowtuneParseResult::kBadVersion:
      return "bad_version";
    case FlowtuneParseResult::kUnknownType:
      return "unknown_type";
    case FlowtuneParseResult::kCountMismatch:
      return "count_mismatch";
    case FlowtuneParseResult::kZeroWeight:
      return "zero_weight";
    case FlowtuneParseResult::kCount:
      break;
  }
  return "unknown";
}

// A parsed message: header fields and a view into the caller's bytes (valid
// as long as they are). Accessors decode entry i in place, i < count.
struct FlowtuneMessage {
  uint8_t version;
  FlowtuneType type;
  uint16_t count;
  const uint8_t* entries;  // just after the header

  FlowletStart flowlet_start(uint32_t i) const {
    const uint8_t* e = entries + i * kFlowletStartEntryLen;
    return {load_be32(e), load_be32(e + 4), load_be32(e + 8), load_be16(e + 12)};
  }
  FlowletEnd flowlet_end(uint32_t i) const {
    return {load_be32(entries + i * kFlowletEndEntryLen)};
  }
  RateUpdate rate_update(uint32_t i) const {
    const uint8_t* e = entries + i * kRateUpdateEntryLen;
    return {load_be32(e), load_be32(e + 4)};
  }
};

// `p` is a whole UDP payload of `len` bytes (the datagram, nothing after it).
FlowtuneParseResult parse_flowtune(const uint8_t* p, uint32_t len, FlowtuneMessage* out);

// Entry size of a type on the wire (0 for a value outside the enum).
uint32_t flowtune_entry_len(FlowtuneType type);

// How many entries of `type` one message whose payload is at most `budget`
// bytes holds: (budget - 8) / entry size, capped by the 16-bit count; 0 when
// not even the header fits. kFlowtuneMtuPayload gives 91 / 366 / 183.
uint32_t flowtune_entries_per_payload(FlowtuneType type, uint32_t budget);

// Each builder writes one message with all of `entries` and returns its
// length (8 + count * entry size), or 0 when it does not fit in cap or holds
// more than 65535 entries: the caller splits a long list with
// flowtune_entries_per_payload and passes cap <= its payload budget.
// build_flowlet_start also returns 0 for an entry of weight 0, which the
// allocator would refuse. An empty list gives a bare 8-byte header.
uint32_t build_flowlet_start(uint8_t* out, uint32_t cap, std::span<const FlowletStart> entries);
uint32_t build_flowlet_end(uint8_t* out, uint32_t cap, std::span<const FlowletEnd> entries);
uint32_t build_rate_update(uint8_t* out, uint32_t cap, std::span<const RateUpdate> entries);

}  // namespace sluice
