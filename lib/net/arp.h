#pragma once
// ARP for Ethernet/IPv4 (RFC 826): parsing requests and replies addressed to
// the switch, and building the frames it sends (replies for its own port
// addresses, requests for unknown peers).

#include <cstdint>

#include "lib/config/config.h"

namespace sluice {

inline constexpr uint16_t kArpOpRequest = 1;
inline constexpr uint16_t kArpOpReply = 2;
inline constexpr MacAddr kBroadcastMac = {0xff, 0xff, 0xff, 0xff, 0xff, 0xff};
inline constexpr MacAddr kZeroMac = {0, 0, 0, 0, 0, 0};

struct ArpMessage {
  uint16_t op;
  MacAddr sha;
  uint32_t spa;  // host byte order
  MacAddr tha;
  uint32_t tpa;  // host byte order
};

// Parses the ARP body (starting at the ARP header, after Ethernet/VLAN).
// False unless htype 1, ptype 0x0800, hlen 6, plen 4, op 1 or 2 and len >= 28.
bool parse_arp(const uint8_t* arp, uint32_t len, ArpMessage* out);

// Writes an untagged Ethernet frame (dst_mac, src_mac, 0x0806) carrying an ARP
// message with sender hardware address src_mac, padded with zeros to 60 bytes
// (the minimum frame without FCS). Returns 60, or 0 when cap < 60.
// A request: op 1, dst_mac kBroadcastMac, tha kZeroMac. A reply: op 2,
// dst_mac = tha = the requester's MAC.
uint32_t build_arp_frame(uint8_t* out, uint32_t cap, uint16_t op, const MacAddr& src_mac,
                         const MacAddr& dst_mac, uint32_t spa, const MacAddr& tha, uint32_t tpa);

}  // namespace sluice
