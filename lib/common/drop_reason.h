#pragma once
// Every reason sluice drops a packet. Each has a stable name used as the
// `reason` label of sluice_port_drops_total; docs/metrics.md lists them.

#include <cstdint>
#include <string_view>

namespace sluice {

enum class DropReason : uint8_t {
  // Parsing (ingress).
  kRunt,              // shorter than an Ethernet header
  kTruncated,         // a header claims more bytes than the frame holds
  kBadIpVersion,      // IPv4 ethertype but version != 4
  kBadIhl,            // IHL < 5
  kBadIpLength,       // total length < IHL*4 or > frame
  kBadIpChecksum,     // IPv4 header checksum wrong
  kTtlExpired,        // TTL 0 or 1 on arrival
  kIpv6,              // IPv6 is parsed and counted, not routed
  kUnknownEthertype,  // not IPv4, IPv6, ARP, VLAN, MAC control, sluice control
  kBadArp,            // ARP we cannot use (wrong hardware/protocol type, short)
  kMartian,           // source or destination that is never forwarded
  kTooBig,            // larger than the egress port's MTU
  // Forwarding.
  kNoRoute,                // LPM miss
  kNoNeighbor,             // egress peer MAC not known yet (ARP pending)
  kLocalDelivery,          // addressed to the switch itself (not ARP)
  kControlUnsupported,     // MAC control / sluice control for a mechanism not on here
  kControlFromHost,        // sluice control frame on a host-facing port (never trusted)
  kControlBadDestination,  // sluice control frame not addressed to the port's MAC
  kControlMalformed,       // sluice control frame: short, bad magic, or bad body length
  kControlBadVersion,      // sluice control frame of a version other than 1
  kControlUnknownType,     // sluice control frame of an unknown type
  kControlInvalid,         // well formed, but names a shard or queue this port lacks
  // Traffic manager (egress).
  kBufferFull,      // shared buffer exhausted
  kQueueThreshold,  // dynamic threshold of the queue exceeded
  kQueueFull,       // queue descriptor ring full
  kRingFull,        // inter-lcore ring full
  kVoqFull,         // Floodgate: the VOQ could not take it (buffer or slots)
  kCodel,           // CoDel dropped it as it left its queue (RFC 8289)
  kPriorityDrop,    // pFabric: the lowest priority in a full port buffer
  // DIBS: buffer admission refused it and it could not be detoured.
  kDetourNoPort,      // no other switch-facing port's queue admits it
  kDetourMaxDetours,  // it has taken dibs.max_detours detours already
  kDetourRefused,     // the detour port's owner lcore refused it (its snapshot was stale)
  // Flowtune: the flow's pacer queue at the edge held max_held_packets.
  kPacerFull,
  kCount
};

constexpr std::string_view drop_reason_name(DropReason r) {
  switch (r) {
    case DropReason::kRunt:
      return "runt";
    case DropReason::kTruncated:
      return "truncated";
    case DropReason::kBadIpVersion:
      return "bad_ip_version";
    case DropReason::kBadIhl:
      return "bad_ihl";
    case DropReason::kBadIpLength:
      return "bad_ip_length";
    case DropReason::kBadIpChecksum:
      return "bad_ip_checksum";
    case DropReason::kTtlExpired:
      return "ttl_expired";
    case DropReason::kIpv6:
      return "ipv6";
    case DropReason::kUnknownEthertype:
      return "unknown_ethertype";
    case DropReason::kBadArp:
      return "bad_arp";
    case DropReason::kMartian:
      return "martian";
    case DropReason::kTooBig:
      return "too_big";
    case DropReason::kNoRoute:
      return "no_route";
    case DropReason::kNoNeighbor:
      return "no_neighbor";
    case DropReason::kLocalDelivery:
      return "local_delivery";
    case DropReason::kControlUnsupported:
      return "control_unsupported";
    case DropReason::kControlFromHost:
      return "control_from_host";
    case DropReason::kControlBadDestination:
      return "control_bad_destination";
    case DropReason::kControlMalformed:
      return "control_malformed";
    case DropReason::kControlBadVersion:
      return "control_bad_version";
    case DropReason::kControlUnknownType:
      return "control_unknown_type";
    case DropReason::kControlInvalid:
      return "control_invalid";
    case DropReason::kBufferFull:
      return "buffer_full";
    case DropReason::kQueueThreshold:
      return "queue_threshold";
    case DropReason::kQueueFull:
      return "queue_full";
    case DropReason::kRingFull:
      return "ring_full";
    case DropReason::kVoqFull:
      return "voq_full";
    case DropReason::kCodel:
      return "codel";
    case DropReason::kPriorityDrop:
      return "priority_drop";
    case DropReason::kDetourNoPort:
      return "detour_no_port";
    case DropReason::kDetourMaxDetours:
      return "detour_max_detours";
    case DropReason::kDetourRefused:
      return "detour_refused";
    case DropReason::kPacerFull:
      return "pacer_full";
    case DropReason::kCount:
      break;
  }
  return "unknown";
}

constexpr unsigned kDropReasonCount = static_cast<unsigned>(DropReason::kCount);

}  // namespace sluice
