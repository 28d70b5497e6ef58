#include "lib/control/control_intake.h"

#include <cstring>

namespace sluice {

DropReason check_control_frame(const uint8_t* frame, uint32_t len, uint32_t payload_offset,
                               PortRole role, const MacAddr& port_mac, ControlMessage* msg) {
  if (role != PortRole::kSwitch) return DropReason::kControlFromHost;
  if (len < payload_offset || payload_offset < 6) return DropReason::kControlMalformed;
  if (std::memcmp(frame, port_mac.data(), port_mac.size()) != 0)
    return DropReason::kControlBadDestination;
  switch (parse_control(frame + payload_offset, len - payload_offset, msg)) {
    case ControlParseResult::kOk:
      return DropReason::kCount;
    case ControlParseResult::kBadVersion:
      return DropReason::kControlBadVersion;
    case ControlParseResult::kUnknownType:
      return DropReason::kControlUnknownType;
    case ControlParseResult::kTooShort:
    case ControlParseResult::kBadMagic:
    case ControlParseResult::kMalformed:
      break;
  }
  return DropReason::kControlMalformed;
}

}  // namespace sluice
