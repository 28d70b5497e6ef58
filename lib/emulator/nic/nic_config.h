#pragma once
// The emulated host NIC's configuration: a port's nic: key
// (docs/configuration.md, "The host NIC"). nic_config.cc parses and
// validates it; PortConfig::nic holds it.

#include <cstdint>

namespace sluice {

// The emulated NIC of a capture-file host port (SPEC 4.7, docs/pcap-ports.md
// "The host NIC"): send queues per destination or per flow, paced at the
// port's rate, honouring PAUSE and PFC per class, and with mode bfc also BFC
// per queue (its frames carry the queue number in the 0x88B6 shim), with
// mode floodgate also Floodgate's FG_DST_PAUSE per destination.
enum class NicMode { kPlain, kBfc, kFloodgate };
enum class NicQueueKey { kDestination, kFlow };
struct NicConfig {
  NicMode mode = NicMode::kPlain;
  NicQueueKey queue_by = NicQueueKey::kDestination;
  uint32_t queues = 32;     // send queues, 1..4096
  uint32_t frames = 16384;  // frames held before the host's application waits
  uint64_t sticky_ns = 0;   // an idle queue stays its key's this long; 0: 2 x hop_rtt
  // Replies (ACK, NACK, CNP) in a queue of their own, served before data
  // (HPCC's ns-3 NIC); false: they share the data's queues by their key.
  bool reply_queue = false;
  bool given = false;  // a nic: key was written
  int line = 0;
};

struct ConfigSections;
// The nic: key of a port.
extern const ConfigSections kNicSections;

}  // namespace sluice
