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

const RateControl& control_of(const TransportConfig& cfg) {
  static std::unique_ptr<FlowSender> sender;
  sender = ConfiguredTransport(cfg, TransportContext{}).sender(FlowSpec{1, 10'000, 0});
  const auto* gbn = dynamic_cast<const GbnSender*>(sender.get());
  EXPECT_NE(gbn, nullptr);
  return gbn->cc();
}

TEST(TransportFactory, DcqcnRulesPickTheReactionPoint) {
  TransportConfig cfg;
  cfg.kind = TransportKind::kDcqcn;
  EXPECT_NE(dynamic_cast<const DcqcnControl*>(&control_of(cfg)), nullptr);
  cfg.dcqcn.rules = DcqcnParams::Rules::kNs3Mlx;
  EXPECT_NE(dynamic_cast<const DcqcnMlxControl*>(&control_of(cfg)), nullptr);
}

}  // namespace
}  // namespace sluice
