// Which congestion control a transport: section gives a flow
// (lib/emulator/hosts/transport_factory.cc): dcqcn.rules picks the reaction
// point.

#include <gtest/gtest.h>

#include "lib/emulator/hosts/transport_factory.h"
#include "lib/emulator/transport/dcqcn/dcqcn_control.h"
#include "lib/emulator/transport/dcqcn/dcqcn_mlx_control.h"
#include "lib/emulator/transport/rdma/gbn_sender.h"

namespace sluice {
namespace {

// The congestion control of the go-back-N sender a flow gets; null if the
// sender is not one.
const RateControl* control_of(const FlowSender* sender) {
  const auto* gbn = dynamic_cast<const GbnSender*>(sender);
  return gbn == nullptr ? nullptr : &gbn->cc();
}

TEST(TransportFactory, DcqcnRulesPickTheReactionPoint) {
  TransportConfig cfg;
  cfg.kind = TransportKind::kDcqcn;
  const FlowSpec flow{1, 10'000, 0};
  const auto paper = ConfiguredTransport(cfg, TransportContext{}).sender(flow);
  EXPECT_NE(dynamic_cast<const DcqcnControl*>(control_of(paper.get())), nullptr);
  cfg.dcqcn.rules = DcqcnParams::Rules::kNs3Mlx;
  const auto mlx = ConfiguredTransport(cfg, TransportContext{}).sender(flow);
  EXPECT_NE(dynamic_cast<const DcqcnMlxControl*>(control_of(mlx.get())), nullptr);
}

}  // namespace
}  // namespace sluice
