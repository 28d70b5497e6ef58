#pragma once
// Ethernet types sluice recognises, and fixed header sizes.

#include <cstdint>

namespace sluice {

inline constexpr uint16_t kEtherTypeIpv4 = 0x0800;
inline constexpr uint16_t kEtherTypeArp = 0x0806;
inline constexpr uint16_t kEtherTypeVlan = 0x8100;  // 802.1Q C-tag
inline constexpr uint16_t kEtherTypeQinQ = 0x88A8;  // 802.1ad S-tag
inline constexpr uint16_t kEtherTypeIpv6 = 0x86DD;
inline constexpr uint16_t kEtherTypeMacControl = 0x8808;     // PAUSE / PFC
inline constexpr uint16_t kEtherTypeSluiceControl = 0x88B5;  // IEEE local experimental 1
inline constexpr uint16_t kEtherTypeSluiceData = 0x88B6;     // IEEE local experimental 2

inline constexpr uint32_t kEthHeaderLen = 14;
inline constexpr uint32_t kVlanTagLen = 4;
// Data shim: upstream queue (2), shard (1), detour count (1), inner ethertype (2).
inline constexpr uint32_t kSluiceShimLen = 6;
inline constexpr uint32_t kIpv4MinHeaderLen = 20;
inline constexpr uint32_t kIpv6HeaderLen = 40;
inline constexpr uint32_t kArpIpv4Len = 28;      // Ethernet/IPv4 ARP body
inline constexpr uint32_t kEthMinFrameLen = 60;  // without FCS

inline constexpr uint8_t kIpProtoTcp = 6;
inline constexpr uint8_t kIpProtoUdp = 17;

}  // namespace sluice
