#pragma once
// Whether a received sluice control frame (0x88B5) may act on the switch.
// SPEC 5: control frames are accepted only on switch-facing ports, so a host
// can neither pause nor credit the fabric; they must be addressed to the
// port; unknown versions and types are counted and dropped.
// docs/wire-formats.md ("Receiving control frames").

#include <cstdint>

#include "lib/common/drop_reason.h"
#include "lib/config/config.h"
#include "lib/control/control_frame.h"

namespace sluice {

// `frame` is the whole received frame (Ethernet header first), `len` its
// length, `payload_offset` where the control header starts (after the
// 0x88B5 type, past any VLAN tags). Returns DropReason::kCount and fills
// *msg when the frame is accepted, otherwise the reason to count it under.
DropReason check_control_frame(const uint8_t* frame, uint32_t len, uint32_t payload_offset,
                               PortRole role, const MacAddr& port_mac, ControlMessage* msg);

}  // namespace sluice
