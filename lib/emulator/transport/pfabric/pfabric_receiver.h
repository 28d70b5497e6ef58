#pragma once
// One pFabric flow's receiver ("pFabric: Minimal Near-Optimal Datacenter
// Transport", section 4.2: the hosts use SACKs; docs/transports.md
// "pFabric"): every data segment is answered at once with an ACK that
// carries the cumulative point, echoes the segment's send time and, when the
// segment lies above the cumulative point, a SACK block of that segment.
// ACKs carry rank 0, the highest priority, as in the public simulations of
// pFabric, so that pFabric switches serve them first and drop them last.
// A segment shorter than its place in the flow (a sender's one-byte probe)
// is answered but not taken, so segments keep their boundaries. Nothing is
// allocated after construction.

#include <cstdint>
#include <vector>

#include "lib/emulator/transport/flow_transport.h"
#include "lib/emulator/transport/segment.h"

namespace sluice {

class PfabricReceiver final : public FlowReceiver {
 public:
  PfabricReceiver(const TransportContext& ctx, const FlowSpec& flow);

  uint32_t receive(uint64_t now_ns, const Segment& data, Segment* out) override;
  uint64_t delivered_bytes() const override { return rcv_nxt_; }

 private:
  uint64_t segment_end(uint64_t index) const;

  const uint32_t flow_id_;
  const uint64_t flow_bytes_;
  const uint64_t mss_;
  std::vector<bool> received_;  // per segment of the flow; sized once
  uint64_t rcv_nxt_ = 0;        // every byte below has arrived
};

}  // namespace sluice
