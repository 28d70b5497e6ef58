// The nic key of capture-file host ports (docs/configuration.md, "nic").
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "lib/config/config_loader.h"
#include "tests/unit/config/config_errors.h"

namespace sluice {
namespace {

std::vector<std::string> errors_of(const ConfigResult& r) { return error_strings(r); }

// One switch; `h0` is the port line under test, `bfc` the switch's bfc flag.
std::string fabric(const std::string& h0, bool bfc = true) {
  return std::string(R"(
switches:
  - name: s1
    bfc: {enabled: )") +
         (bfc ? "true" : "false") + R"(}
    ports:
      - )" +
         h0 + R"(
      - {name: h1, role: host, rate: 10Gbps, pcap: {tx: h1.pcap}}
)";
}

TEST(NicConfig, PlainPerDestinationByDefault) {
  const ConfigResult r =
      load_config_string(fabric("{name: h0, role: host, rate: 10Gbps, pcap: {rx: a.pcap}}"), "t");
  ASSERT_TRUE(r.ok()) << errors_of(r)[0];
  const NicConfig& n = r.config.switches[0].ports[0].nic;
  EXPECT_FALSE(n.given);
  EXPECT_EQ(n.mode, NicMode::kPlain);
  EXPECT_EQ(n.queue_by, NicQueueKey::kDestination);
  EXPECT_EQ(n.queues, 32u);
  EXPECT_EQ(n.frames, 16384u);
  EXPECT_EQ(n.sticky_ns, 0u);
  EXPECT_FALSE(n.reply_queue);
}

TEST(NicConfig, ReplyQueueTakesOneOfTwoOrMore) {
  ConfigResult r =
      load_config_string(fabric("{name: h0, role: host, rate: 10Gbps, pcap: {rx: a.pcap}, "
                                "nic: {queues: 2, reply_queue: true}}"),
                         "t");
  ASSERT_TRUE(r.ok()) << errors_of(r)[0];
  EXPECT_TRUE(r.config.switches[0].ports[0].nic.reply_queue);
  EXPECT_EQ(errors_of(load_config_string(
                fabric("{name: h0, role: host, rate: 10Gbps, pcap: {rx: a.pcap}, "
                       "nic: {queues: 1, reply_queue: true}}"),
                "t")),
            (std::vector<std::string>{"t:6: switches[0].ports[0].nic: nic: reply_queue takes one "
                                      "of the NIC's queues for replies: expected queues of 2 or "
                                      "more"}));
}

TEST(NicConfig, ShorthandAndMap) {
  ConfigResult r = load_config_string(
      fabric("{name: h0, role: host, rate: 10Gbps, pcap: {rx: a.pcap}, nic: bfc}"), "t");
  ASSERT_TRUE(r.ok()) << errors_of(r)[0];
  EXPECT_EQ(r.config.switches[0].ports[0].nic.mode, NicMode::kBfc);
  r = load_config_string(fabric("{name: h0, role: host, rate: 10Gbps, pcap: {rx: a.pcap}, "
                                "nic: {mode: bfc, queue_by: flow, queues: 8, frames: 100, "
                                "sticky: 30us}}"),
                         "t");
  ASSERT_TRUE(r.ok()) << errors_of(r)[0];
  const NicConfig& n = r.config.switches[0].ports[0].nic;
  EXPECT_EQ(n.mode, NicMode::kBfc);
  EXPECT_EQ(n.queue_by, NicQueueKey::kFlow);
  EXPECT_EQ(n.queues, 8u);
  EXPECT_EQ(n.frames, 100u);
  EXPECT_EQ(n.sticky_ns, 30'000u);
}

// A queue per flow: up to 4096 queues, while the switch's bitmap of them
// fits the port's MTU (a 522-byte payload for 4096).
TEST(NicConfig, UpTo4096QueuesWithinTheBitmapsMtu) {
  ConfigResult r =
      load_config_string(fabric("{name: h0, role: host, rate: 10Gbps, pcap: {rx: a.pcap}, "
                                "nic: {mode: bfc, queue_by: flow, queues: 4096}}"),
                         "t");
  ASSERT_TRUE(r.ok()) << errors_of(r)[0];
  EXPECT_EQ(r.config.switches[0].ports[0].nic.queues, 4096u);
  EXPECT_FALSE(load_config_string(fabric("{name: h0, role: host, rate: 10Gbps, pcap: {rx: "
                                         "a.pcap}, nic: {queues: 4097}}"),
                                  "t")
                   .ok());
  EXPECT_EQ(errors_of(load_config_string(
                fabric("{name: h0, role: host, rate: 10Gbps, mtu: 500, pcap: {rx: a.pcap}, "
                       "nic: {mode: bfc, queues: 4096}}"),
                "t")),
            (std::vector<std::string>{"t:6: switches[0].ports[0].nic: nic: the switch's BFC "
                                      "bitmap to 4096 queues is a 522-byte payload, beyond the "
                                      "port's mtu 500: fewer queues or a larger mtu"}));
}

TEST(NicConfig, WhereANicCannotBe) {
  EXPECT_EQ(
      errors_of(load_config_string(
          fabric("{name: h0, role: host, rate: 10Gbps, device: net_null0, nic: plain}"), "t")),
      (std::vector<std::string>{"t:6: switches[0].ports[0].nic: nic: only a port that "
                                "replays a capture (pcap.rx) or runs the transport has an "
                                "emulated host NIC"}));
  EXPECT_EQ(
      errors_of(load_config_string(
          fabric("{name: h0, role: switch, rate: 10Gbps, pcap: {rx: a.pcap}, nic: plain}"), "t")),
      (std::vector<std::string>{"t:6: switches[0].ports[0].nic: nic: the emulated NIC is a "
                                "host's: the port's role must be host"}));
  EXPECT_EQ(
      errors_of(load_config_string(
          fabric("{name: h0, role: host, rate: 0, pcap: {rx: a.pcap}, nic: plain}", false), "t")),
      (std::vector<std::string>{"t:6: switches[0].ports[0].nic: nic: the host NIC sends "
                                "at the port's rate: expected a rate above 0"}));
  EXPECT_EQ(
      errors_of(load_config_string(
          fabric("{name: h0, role: host, rate: 1Gbps, pcap: {rx: a.pcap}, nic: bfc}", false), "t")),
      (std::vector<std::string>{"t:6: switches[0].ports[0].nic: nic: bfc needs BFC on "
                                "switch \"s1\" (bfc: {enabled: true}) to pause its queues"}));
}

// One switch with `section` (a floodgate: or bfc: line, or nothing) and
// host port h0 as given.
std::string floodgate_fabric(const std::string& section, const std::string& h0) {
  return R"(
switches:
  - name: s1
)" + section +
         R"(
    ports:
      - )" +
         h0 + R"(
      - {name: h1, role: host, rate: 10Gbps, pcap: {tx: h1.pcap}}
)";
}

// The errors whose key is the nic key (the floodgate section may have others
// of its own while the switch side is being built).
std::vector<std::string> nic_errors(const ConfigResult& r) {
  std::vector<std::string> out;
  for (const std::string& e : errors_of(r))
    if (e.find(".nic:") != std::string::npos) out.push_back(e);
  return out;
}

constexpr const char* kDstPauseSwitch = "    floodgate: {enabled: true, dst_pause: true}";

TEST(NicConfig, FloodgateShorthandAndMap) {
  ConfigResult r = load_config_string(
      floodgate_fabric(kDstPauseSwitch,
                       "{name: h0, role: host, rate: 10Gbps, pcap: {rx: a.pcap}, nic: floodgate}"),
      "t");
  EXPECT_EQ(nic_errors(r), std::vector<std::string>{});
  EXPECT_EQ(r.config.switches[0].ports[0].nic.mode, NicMode::kFloodgate);
  r = load_config_string(
      floodgate_fabric(kDstPauseSwitch,
                       "{name: h0, role: host, rate: 10Gbps, pcap: {rx: a.pcap}, "
                       "nic: {mode: floodgate, queue_by: flow, queues: 16}}"),
      "t");
  EXPECT_EQ(nic_errors(r), std::vector<std::string>{});
  const NicConfig& n = r.config.switches[0].ports[0].nic;
  EXPECT_EQ(n.mode, NicMode::kFloodgate);
  EXPECT_EQ(n.queue_by, NicQueueKey::kFlow);
  EXPECT_EQ(n.queues, 16u);
}

TEST(NicConfig, FloodgateNicNeedsASwitchThatSendsDstPause) {
  const std::string want =
      "t:6: switches[0].ports[0].nic: nic: floodgate needs dstPause on switch \"s1\" "
      "(floodgate: {enabled: true, dst_pause: true}) to pause its destinations";
  const std::string h0 = "{name: h0, role: host, rate: 10Gbps, pcap: {rx: a.pcap}, nic: floodgate}";
  // No floodgate section at all: the only error.
  EXPECT_EQ(errors_of(load_config_string(floodgate_fabric("", h0), "t")),
            std::vector<std::string>{want});
  // Floodgate without dstPause.
  EXPECT_EQ(
      nic_errors(load_config_string(floodgate_fabric("    floodgate: {enabled: true}", h0), "t")),
      std::vector<std::string>{want});
  // The map form, its line the nic key's.
  EXPECT_EQ(nic_errors(load_config_string(
                floodgate_fabric("    floodgate: {enabled: true, dst_pause: false}",
                                 "{name: h0, role: host, rate: 10Gbps, pcap: {rx: a.pcap}, "
                                 "nic: {mode: floodgate}}"),
                "t")),
            std::vector<std::string>{want});
}

TEST(NicConfig, BadValuesAreNamed) {
  const ConfigResult r = load_config_string(
      fabric("{name: h0, role: host, rate: 10Gbps, pcap: {rx: a.pcap}, "
             "nic: {mode: tcp, queue_by: port, queues: 4097, frames: 0, speed: 3}}"),
      "t");
  std::vector<std::string> e = errors_of(r);
  ASSERT_FALSE(e.empty());
  const std::string all = [&] {
    std::string s;
    for (const auto& x : e) s += x + "\n";
    return s;
  }();
  for (const char* key : {"nic.speed", "nic.mode", "nic.queue_by", "nic.queues", "nic.frames"})
    EXPECT_NE(all.find(key), std::string::npos) << key << " not named in\n" << all;
}

}  // namespace
}  // namespace sluice
