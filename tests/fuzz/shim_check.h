#pragma once
// One check of the 0x88B6 data shim (lib/control/data_shim.h) on arbitrary
// frame bytes, shared by the libFuzzer target (shim_fuzz.cc) and the corpus
// replay in the unit tests. When the parser reports a shim, it must lie inside
// the frame, parse_shim must read the same fields read_shim does, stripping it
// must leave a frame 6 bytes shorter whose type field is the inner type, and
// inserting it again must give back the original bytes. Returns false on a
// violation; ASan reports any access outside the frame.

#include <cstdint>
#include <cstring>
#include <vector>

#include "lib/control/data_shim.h"
#include "lib/net/packet_parser.h"

namespace sluice {

// `data` holds exactly `size` bytes (nullptr when size is 0).
inline bool check_data_shim(const uint8_t* data, uint32_t size) {
  ParsedPacket p;
  parse_packet(data, size, &p);
  if (!p.has_shim) {
    // parse_shim on whatever follows the first 14 bytes: never more than it has.
    DataShim s;
    if (size >= 14) {
      const bool ok = parse_shim(data + 14, size - 14, &s);
      if (ok != (size - 14 >= kSluiceShimLen)) return false;
    }
    return true;
  }
  const uint32_t off = p.shim_offset;
  if (off < 14 || off + kSluiceShimLen > size) return false;
  if (load_be16(data + off - 2) != kEtherTypeSluiceData) return false;
  DataShim parsed;
  if (!parse_shim(data + off, size - off, &parsed)) return false;
  const DataShim direct = read_shim(data + off);
  if (parsed.upstream_queue != direct.upstream_queue || parsed.shard != direct.shard ||
      parsed.detours != direct.detours || parsed.inner_ethertype != direct.inner_ethertype) {
    return false;
  }
  if (p.ethertype != parsed.inner_ethertype) return false;

  // Strip in an exactly-sized copy; the frame then starts 6 bytes in.
  std::vector<uint8_t> frame(data, data + size);
  DataShim stripped;
  strip_shim(frame.data(), off, &stripped);
  if (stripped.upstream_queue != parsed.upstream_queue || stripped.shard != parsed.shard ||
      stripped.detours != parsed.detours || stripped.inner_ethertype != parsed.inner_ethertype) {
    return false;
  }
  const uint8_t* inner = frame.data() + kSluiceShimLen;
  const uint32_t type_offset = off - 2;
  if (load_be16(inner + type_offset) != parsed.inner_ethertype) return false;
  // Everything before the type field and after the shim is unchanged.
  if (std::memcmp(inner, data, type_offset) != 0) return false;
  if (std::memcmp(inner + type_offset + 2, data + off + kSluiceShimLen,
                  size - off - kSluiceShimLen) != 0) {
    return false;
  }
  // Inserting the same shim again gives back the original frame.
  insert_shim(frame.data(), type_offset, parsed);
  return std::memcmp(frame.data(), data, size) == 0;
}

}  // namespace sluice
