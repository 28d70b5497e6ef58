#include "lib/control/data_shim.h"

#include <cstring>

#include "lib/net/byte_order.h"

namespace sluice {

bool parse_shim(const uint8_t* p, uint32_t len, DataShim* out) {
  if (len < kSluiceShimLen) return false;
  *out = read_shim(p);
  return true;
}

void insert_shim(uint8_t* frame, uint32_t type_offset, const DataShim& shim) {
  const uint16_t inner = load_be16(frame + kSluiceShimLen + type_offset);
  std::memmove(frame, frame + kSluiceShimLen, type_offset);
  store_be16(frame + type_offset, kEtherTypeSluiceData);
  DataShim s = shim;
  s.inner_ethertype = inner;
  write_shim(frame + type_offset + 2, s);
}

void strip_shim(uint8_t* frame, uint32_t shim_offset, DataShim* out) {
  *out = read_shim(frame + shim_offset);
  // The 0x88B6 field just before the shim takes the inner type; everything
  // up to and including it slides forward over the shim.
  store_be16(frame + shim_offset - 2, out->inner_ethertype);
  std::memmove(frame + kSluiceShimLen, frame, shim_offset);
}

}  // namespace sluice
