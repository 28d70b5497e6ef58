#include "lib/net/arp.h"

#include <cstring>

#include "lib/net/byte_order.h"
#include "lib/net/ethertypes.h"

namespace sluice {

namespace {
constexpr uint16_t kArpHtypeEthernet = 1;
}  // namespace

bool parse_arp(const uint8_t* arp, uint32_t len, ArpMessage* out) {
  if (len < kArpIpv4Len) return false;
  if (load_be16(arp) != kArpHtypeEthernet || load_be16(arp + 2) != kEtherTypeIpv4 || arp[4] != 6 ||
      arp[5] != 4) {
    return false;
  }
  const uint16_t op = load_be16(arp + 6);
  if (op != kArpOpRequest && op != kArpOpReply) return false;
  out->op = op;
  std::memcpy(out->sha.data(), arp + 8, 6);
  out->spa = load_be32(arp + 14);
  std::memcpy(out->tha.data(), arp + 18, 6);
  out->tpa = load_be32(arp + 24);
  return true;
}

uint32_t build_arp_frame(uint8_t* out, uint32_t cap, uint16_t op, const MacAddr& src_mac,
                         const MacAddr& dst_mac, uint32_t spa, const MacAddr& tha, uint32_t tpa) {
  if (cap < kEthMinFrameLen) return 0;
  std::memset(out, 0, kEthMinFrameLen);
  std::memcpy(out, dst_mac.data(), 6);
  std::memcpy(out + 6, src_mac.data(), 6);
  store_be16(out + 12, kEtherTypeArp);
  uint8_t* arp = out + kEthHeaderLen;
  store_be16(arp, kArpHtypeEthernet);
  store_be16(arp + 2, kEtherTypeIpv4);
  arp[4] = 6;
  arp[5] = 4;
  store_be16(arp + 6, op);
  std::memcpy(arp + 8, src_mac.data(), 6);
  store_be32(arp + 14, spa);
  std::memcpy(arp + 18, tha.data(), 6);
  store_be32(arp + 24, tpa);
  return kEthMinFrameLen;
}

}  // namespace sluice
