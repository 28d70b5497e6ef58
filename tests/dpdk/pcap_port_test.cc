// PcapPort against a real mempool (EAL with --no-huge, no devices): paced
// replay driven by a made-up clock, fast loops, pool exhaustion, and the tx
// capture read back byte for byte. Capture images are assembled here from the
// pcap format, independently of lib/capture.
#include <gtest/gtest.h>
#include <rte_eal.h>
#include <rte_mbuf.h>
#include <rte_mempool.h>

#include <algorithm>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <iterator>
#include <string>
#include <system_error>
#include <vector>

#include "lib/control/control_frame.h"
#include "lib/net/ipv4_rewrite.h"
#include "switch/ports/pcap_port.h"
#include "tests/dpdk/eal_test_main.h"

namespace sluice {
namespace {

using Bytes = std::vector<uint8_t>;

void be32(Bytes* b, uint32_t v) {
  for (int shift = 24; shift >= 0; shift -= 8) b->push_back(static_cast<uint8_t>(v >> shift));
}
void le32(Bytes* b, uint32_t v) {
  for (int shift = 0; shift < 32; shift += 8) b->push_back(static_cast<uint8_t>(v >> shift));
}

Bytes frame_of(size_t len, uint8_t seed) {
  Bytes f(len);
  for (size_t i = 0; i < len; ++i) f[i] = static_cast<uint8_t>(seed + i * 13);
  return f;
}

struct Frame {
  uint32_t sec, usec;
  Bytes bytes;
  uint32_t wire = 0;  // original length when more than the bytes (snaplen-cut)
};

// A microsecond-resolution, big-endian capture (the less common byte order).
std::string write_capture(const std::string& name, const std::vector<Frame>& frames) {
  Bytes img;
  be32(&img, 0xa1b2c3d4);
  be32(&img, 0x00020004);  // version 2.4
  be32(&img, 0);
  be32(&img, 0);
  be32(&img, 65535);
  be32(&img, 1);
  for (const Frame& f : frames) {
    be32(&img, f.sec);
    be32(&img, f.usec);
    be32(&img, static_cast<uint32_t>(f.bytes.size()));
    be32(&img, f.wire != 0 ? f.wire : static_cast<uint32_t>(f.bytes.size()));
    img.insert(img.end(), f.bytes.begin(), f.bytes.end());
  }
  const std::string path = testing::TempDir() + name;
  FILE* out = std::fopen(path.c_str(), "wb");
  EXPECT_NE(out, nullptr);
  std::fwrite(img.data(), 1, img.size(), out);
  std::fclose(out);
  return path;
}

Bytes slurp(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return Bytes(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
}

Bytes bytes_of(const rte_mbuf* m) {
  const auto* p = rte_pktmbuf_mtod(m, const uint8_t*);
  return Bytes(p, p + m->data_len);
}

class PcapPortTest : public testing::Test {
 protected:
  void SetUp() override {
    // 3000 bytes exceeds the default 2048-byte data room: left out of the replay.
    frames_ = {{1000, 0, frame_of(60, 1)},   {1000, 10, frame_of(1514, 2)},
               {1000, 10, frame_of(64, 3)},  {1000, 17, frame_of(3000, 4)},
               {1000, 25, frame_of(128, 5)}, {1000, 100, frame_of(2048, 6)}};
    rx_path_ = write_capture("pcap_port_rx.pcap", frames_);
    pool_ = rte_pktmbuf_pool_create(("t" + std::to_string(counter_++)).c_str(), 63, 0, 0,
                                    RTE_MBUF_DEFAULT_BUF_SIZE, SOCKET_ID_ANY);
    ASSERT_NE(pool_, nullptr);
    mbufs_.adopt(pool_);
  }
  void TearDown() override {
    EXPECT_EQ(rte_mempool_avail_count(pool_), 63u) << "mbufs leaked";
    rte_mempool_free(pool_);
    std::remove(rx_path_.c_str());
  }
  // Frame i of the replay, i.e. of frames_ without the oversize one.
  const Bytes& replayed(size_t i) const { return frames_[i < 3 ? i : i + 1].bytes; }

  std::unique_ptr<PcapPort> open(PcapReplayMode mode, bool loop, double speed) {
    PcapPortConfig cfg;
    cfg.rx_path = rx_path_;
    cfg.mode = mode;
    cfg.loop = loop;
    cfg.speed = speed;
    std::string error;
    auto port = PcapPort::open(cfg, mbufs_, &error);
    EXPECT_NE(port, nullptr) << error;
    return port;
  }

  static inline int counter_ = 0;
  std::vector<Frame> frames_;
  std::string rx_path_;
  rte_mempool* pool_ = nullptr;
  MbufSupply mbufs_;
};

TEST_F(PcapPortTest, PacedAtSpeedTwo) {
  auto port = open(PcapReplayMode::kPaced, false, 2.0);
  ASSERT_NE(port, nullptr);
  EXPECT_EQ(port->oversize_skipped(), 1u);
  EXPECT_EQ(port->oversize_largest(), 3000u);
  EXPECT_EQ(port->replay_frames(), 5u);
  rte_mbuf* pkts[8];
  EXPECT_EQ(port->rx_burst(5'000'000, pkts, 8), 0) << "nothing before start()";
  // Capture offsets 0, 10, 10, 25, 100 us; at speed 2 due at +0, +5, +5, +12.5, +50 us.
  port->start(1'000'000, port->first_timestamp_ns());
  EXPECT_EQ(port->rx_burst(999'999, pkts, 8), 0);
  ASSERT_EQ(port->rx_burst(1'000'000, pkts, 8), 1);
  EXPECT_EQ(bytes_of(pkts[0]), replayed(0));
  EXPECT_EQ(pkts[0]->pkt_len, 60u);
  EXPECT_EQ(pkts[0]->nb_segs, 1);
  rte_pktmbuf_free(pkts[0]);
  EXPECT_EQ(port->rx_burst(1'004'999, pkts, 8), 0);
  // Two frames due at 1'005'000; n = 1 takes one per call, in file order.
  ASSERT_EQ(port->rx_burst(1'005'000, pkts, 1), 1);
  EXPECT_EQ(bytes_of(pkts[0]), replayed(1));
  ASSERT_EQ(port->rx_burst(1'005'001, pkts + 1, 1), 1);
  EXPECT_EQ(bytes_of(pkts[1]), replayed(2));
  rte_pktmbuf_free_bulk(pkts, 2);
  EXPECT_EQ(port->max_lateness_ns(), 1u);
  EXPECT_EQ(port->rx_burst(1'012'499, pkts, 8), 0);
  // Late poll: both remaining frames come out together, the first 87.5 us late.
  ASSERT_EQ(port->rx_burst(1'100'000, pkts, 8), 2);
  EXPECT_EQ(bytes_of(pkts[0]), replayed(3));
  EXPECT_EQ(bytes_of(pkts[1]), replayed(4));
  EXPECT_EQ(pkts[1]->pkt_len, 2048u);
  rte_pktmbuf_free_bulk(pkts, 2);
  EXPECT_EQ(port->max_lateness_ns(), 87'500u);
  EXPECT_TRUE(port->rx_done());
  EXPECT_EQ(port->rx_burst(UINT64_MAX, pkts, 8), 0);
  EXPECT_EQ(port->rx_frames(), 5u);
  EXPECT_EQ(port->rx_bytes(), 60u + 1514 + 64 + 128 + 2048);
  EXPECT_EQ(port->passes(), 1u);
}

TEST_F(PcapPortTest, PacedFromASharedOriginKeepsTheCapturesOffset) {
  auto port = open(PcapReplayMode::kPaced, false, 2.0);
  ASSERT_NE(port, nullptr);
  // Another capture's first frame was 40 us before this one's: at speed 2
  // this capture starts 20 us after the shared start.
  port->start(1'000'000, port->first_timestamp_ns() - 40'000);
  rte_mbuf* pkts[8];
  EXPECT_EQ(port->rx_burst(1'019'999, pkts, 8), 0);
  ASSERT_EQ(port->rx_burst(1'020'000, pkts, 8), 1);
  EXPECT_EQ(bytes_of(pkts[0]), replayed(0));
  rte_pktmbuf_free(pkts[0]);
  // The rest keep their own offsets from there (+5 us at speed 2).
  EXPECT_EQ(port->rx_burst(1'024'999, pkts, 8), 0);
  ASSERT_EQ(port->rx_burst(1'025'000, pkts, 8), 2);
  rte_pktmbuf_free_bulk(pkts, 2);
}

TEST_F(PcapPortTest, PacedLoopContinuesAfterOneAverageGap) {
  auto port = open(PcapReplayMode::kPaced, true, 1.0);
  ASSERT_NE(port, nullptr);
  // Offsets 0, 10, 10, 25, 100 us; average gap 100/4 = 25 us, pass length 125 us.
  port->start(0, port->first_timestamp_ns());
  rte_mbuf* pkts[8];
  ASSERT_EQ(port->rx_burst(100'000, pkts, 8), 5);
  rte_pktmbuf_free_bulk(pkts, 5);
  EXPECT_FALSE(port->rx_done());
  EXPECT_EQ(port->rx_burst(124'999, pkts, 8), 0);
  ASSERT_EQ(port->rx_burst(135'000, pkts, 8), 3);  // due 125, 135, 135 us
  EXPECT_EQ(bytes_of(pkts[0]), replayed(0));
  EXPECT_EQ(bytes_of(pkts[2]), replayed(2));
  rte_pktmbuf_free_bulk(pkts, 3);
  EXPECT_EQ(port->passes(), 1u);
  EXPECT_EQ(port->max_lateness_ns(), 100'000u);  // frame 0 of pass 0, taken at 100 us
}

TEST_F(PcapPortTest, FastLoopWrapsInOrder) {
  auto port = open(PcapReplayMode::kFast, true, 1.0);
  ASSERT_NE(port, nullptr);
  port->start(0, port->first_timestamp_ns());
  rte_mbuf* pkts[16];
  ASSERT_EQ(port->rx_burst(0, pkts, 12), 12);
  for (int i = 0; i < 12; ++i) EXPECT_EQ(bytes_of(pkts[i]), replayed(i % 5)) << i;
  rte_pktmbuf_free_bulk(pkts, 12);
  EXPECT_EQ(port->passes(), 2u);
  EXPECT_EQ(port->max_lateness_ns(), 0u);
  EXPECT_FALSE(port->rx_done());
}

TEST_F(PcapPortTest, PoolExhaustionLosesNoFrame) {
  auto port = open(PcapReplayMode::kFast, false, 1.0);
  ASSERT_NE(port, nullptr);
  port->start(0, port->first_timestamp_ns());
  std::vector<rte_mbuf*> hold(60);
  ASSERT_EQ(rte_pktmbuf_alloc_bulk(pool_, hold.data(), 60), 0);  // 3 mbufs left
  rte_mbuf* pkts[8];
  ASSERT_EQ(port->rx_burst(0, pkts, 8), 3);
  EXPECT_EQ(port->alloc_failures(), 1u);
  EXPECT_EQ(port->rx_burst(0, pkts + 3, 8), 0);
  EXPECT_EQ(port->alloc_failures(), 2u);
  rte_pktmbuf_free_bulk(hold.data(), 60);
  ASSERT_EQ(port->rx_burst(0, pkts + 3, 8), 2);
  for (int i = 0; i < 5; ++i) EXPECT_EQ(bytes_of(pkts[i]), replayed(i)) << i;
  rte_pktmbuf_free_bulk(pkts, 5);
  EXPECT_TRUE(port->rx_done());
  EXPECT_EQ(port->rx_frames(), 5u);
}

TEST_F(PcapPortTest, WritesWhatItTransmits) {
  PcapPortConfig cfg;
  cfg.tx_path = testing::TempDir() + "pcap_port_tx.pcap";
  std::string error;
  auto port = PcapPort::open(cfg, mbufs_, &error);
  ASSERT_NE(port, nullptr) << error;
  EXPECT_TRUE(port->rx_done());  // no rx file: nothing to replay
  const int64_t offset = 1'700'000'000'000'000'000 - 5'000;
  port->set_clock_offset(offset);

  const Bytes a = frame_of(60, 7), b1 = frame_of(1000, 8), b2 = frame_of(500, 9),
              c = frame_of(64, 10);
  auto make = [&](const Bytes& data) {
    rte_mbuf* m = rte_pktmbuf_alloc(pool_);
    std::memcpy(rte_pktmbuf_append(m, static_cast<uint16_t>(data.size())), data.data(),
                data.size());
    return m;
  };
  rte_mbuf* chain = make(b1);
  ASSERT_EQ(rte_pktmbuf_chain(chain, make(b2)), 0);  // a two-segment frame of 1500 bytes
  rte_mbuf* burst1[2] = {make(a), chain};
  EXPECT_EQ(port->tx_burst(10'000, burst1, 2), 2);
  rte_mbuf* burst2[1] = {make(c)};
  const uint64_t at[1] = {1'000'000'123};
  EXPECT_EQ(port->tx_burst_at(at, burst2, 1), 1);
  ASSERT_TRUE(port->flush(&error)) << error;
  EXPECT_EQ(port->tx_frames(), 3u);
  EXPECT_EQ(port->tx_bytes(), 60u + 1500 + 64);

  Bytes expected = {0x4d, 0x3c, 0xb2, 0xa1, 2, 0, 4, 0};  // nanosecond pcap, little endian
  for (uint32_t v : {0u, 0u, 65535u, 1u}) le32(&expected, v);
  auto record = [&](uint32_t sec, uint32_t nsec, const Bytes& data) {
    for (uint32_t v : {sec, nsec, uint32_t(data.size()), uint32_t(data.size())}) le32(&expected, v);
    expected.insert(expected.end(), data.begin(), data.end());
  };
  Bytes b = b1;
  b.insert(b.end(), b2.begin(), b2.end());
  // realtime = now + offset = 1.7e18 + 5000 ns; the third: 1.7e18 + 1'000'000'123 - 5000 ns.
  record(1'700'000'000, 5'000, a);
  record(1'700'000'000, 5'000, b);
  record(1'700'000'000, 999'995'123, c);
  const Bytes got = slurp(cfg.tx_path);
  EXPECT_EQ(got.size(), expected.size());
  EXPECT_TRUE(got == expected) << "tx capture differs from the expected bytes";
  std::remove(cfg.tx_path.c_str());
}

// The host NIC: 1 Gb/s, 24 bytes of overhead, so a 101-byte frame takes 1000 ns
// of wire and one pause quantum is 512 ns.
constexpr uint64_t k1G = 1'000'000'000;

// A MAC Control frame as 802.3 Annex 31B / 31D lay it out, padded to 60 bytes.
Bytes mac_control(uint16_t opcode, uint8_t enable, std::vector<uint16_t> times) {
  Bytes f = {0x01, 0x80, 0xC2, 0x00, 0x00, 0x01, 0x02, 0, 0, 0, 0, 0x07, 0x88, 0x08};
  f.push_back(static_cast<uint8_t>(opcode >> 8));
  f.push_back(static_cast<uint8_t>(opcode));
  if (opcode == 0x0101) {
    f.push_back(0);
    f.push_back(enable);
  }
  for (uint16_t t : times) {
    f.push_back(static_cast<uint8_t>(t >> 8));
    f.push_back(static_cast<uint8_t>(t));
  }
  f.resize(60, 0);
  return f;
}
Bytes pause_frame(uint16_t quanta) { return mac_control(0x0001, 0, {quanta}); }
Bytes pfc_class(uint8_t c, uint16_t quanta) {
  std::vector<uint16_t> times(8, 0);
  times[c] = quanta;
  return mac_control(0x0101, static_cast<uint8_t>(1u << c), times);
}

// A UDP/IPv4 frame of 101 bytes to 10.0.0.<dst> with DSCP `dscp` (below).
Bytes ipv4_frame(uint8_t dst, uint8_t dscp = 0);

class HostNicPortTest : public PcapPortTest {
 protected:
  // `count` frames of 101 bytes, all captured at the same instant (all due at start).
  std::unique_ptr<PcapPort> open_host(int count, const std::string& tx_path = "") {
    std::vector<Frame> frames;
    for (int i = 0; i < count; ++i) frames.push_back({1000, 0, frame_of(101, uint8_t(20 + i))});
    burst_path_ = write_capture("pcap_port_burst.pcap", frames);
    PcapPortConfig cfg;
    cfg.rx_path = burst_path_;
    cfg.tx_path = tx_path;
    std::string error;
    auto port = PcapPort::open(cfg, mbufs_, &error);
    EXPECT_NE(port, nullptr) << error;
    if (port != nullptr) port->set_host_link(k1G, 24);
    return port;
  }
  // Frames 0, 2, 4 to 10.0.0.2 and 1, 3, 5 to 10.0.0.3, all due at once,
  // behind a NIC of 4 per-destination queues at 1 Gb/s.
  std::unique_ptr<PcapPort> open_two_destination_host(const std::string& name, HostNicConfig nic) {
    std::vector<Frame> frames;
    for (int i = 0; i < 6; ++i) frames.push_back({1000, 0, ipv4_frame(i % 2 == 0 ? 2 : 3)});
    burst_path_ = write_capture(name, frames);
    PcapPortConfig cfg;
    cfg.rx_path = burst_path_;
    std::string error;
    auto port = PcapPort::open(cfg, mbufs_, &error);
    EXPECT_NE(port, nullptr) << error;
    if (port == nullptr) return nullptr;
    nic.rate_bps = k1G;
    nic.queues = 4;
    std::array<uint8_t, 64> by_dscp{};
    port->set_host_nic(nic, NicQueueKey::kDestination, by_dscp);
    return port;
  }
  void TearDown() override {
    std::remove(burst_path_.c_str());
    PcapPortTest::TearDown();
  }
  rte_mbuf* make(const Bytes& data) {
    rte_mbuf* m = rte_pktmbuf_alloc(pool_);
    std::memcpy(rte_pktmbuf_append(m, static_cast<uint16_t>(data.size())), data.data(),
                data.size());
    return m;
  }
  // rx_burst at now_ns; frees what it got and returns how many.
  uint16_t rx(PcapPort& port, uint64_t now_ns) {
    rte_mbuf* pkts[8];
    const uint16_t got = port.rx_burst(now_ns, pkts, 8);
    rte_pktmbuf_free_bulk(pkts, got);
    return got;
  }
  std::string burst_path_;
};

TEST_F(HostNicPortTest, FramesDueTogetherLeaveAtLineRate) {
  auto port = open_host(4);
  ASSERT_NE(port, nullptr);
  port->start(0, port->first_timestamp_ns());
  EXPECT_EQ(rx(*port, 0), 1);
  EXPECT_EQ(rx(*port, 999), 0);
  EXPECT_EQ(rx(*port, 1000), 1);
  EXPECT_EQ(rx(*port, 5000), 2);  // could start at 2000 and 3000
  EXPECT_TRUE(port->rx_done());
  EXPECT_EQ(port->max_lateness_ns(), 3000u);  // the third frame, taken 3000 ns after its start
  EXPECT_EQ(port->host_paused_ns(), 0u);
}

TEST_F(HostNicPortTest, WithoutHostLinkEverythingDueGoesAtOnce) {
  auto port = open_host(4);
  ASSERT_NE(port, nullptr);
  port->set_host_link(0, 24);
  port->start(0, port->first_timestamp_ns());
  EXPECT_EQ(rx(*port, 0), 4);
}

TEST_F(HostNicPortTest, PauseAndPfcStopTheHost) {
  const std::string tx_path = testing::TempDir() + "pcap_port_host_tx.pcap";
  auto port = open_host(9, tx_path);  // not IPv4: every frame is of class 0
  ASSERT_NE(port, nullptr);
  port->start(0, port->first_timestamp_ns());
  EXPECT_EQ(rx(*port, 0), 1);

  // PAUSE of 10 quanta (5120 ns) at 500: paused [500, 5620).
  rte_mbuf* pause1[1] = {make(pause_frame(10))};
  EXPECT_EQ(port->tx_burst(500, pause1, 1), 1);
  EXPECT_EQ(rx(*port, 1000), 0);
  EXPECT_EQ(rx(*port, 5619), 0);
  EXPECT_EQ(rx(*port, 5620), 1);  // the backlog leaves at line rate from the end
  EXPECT_EQ(rx(*port, 6619), 0);
  EXPECT_EQ(rx(*port, 6620), 1);
  EXPECT_EQ(rx(*port, 7620), 1);  // the wire is busy until 8620
  EXPECT_EQ(port->host_paused_ns(), 5120u);

  // PFC pausing class 0 for 0xFFFF quanta at 8000, next to a data frame; resumed at 9000.
  rte_mbuf* pfc[2] = {make(pfc_class(0, 0xFFFF)), make(frame_of(60, 40))};
  const uint64_t at_8000[2] = {8000, 8000};
  EXPECT_EQ(port->tx_burst_at(at_8000, pfc, 2), 2);
  EXPECT_EQ(rx(*port, 8620), 0);
  EXPECT_EQ(rx(*port, 8999), 0);
  rte_mbuf* xon[1] = {make(pfc_class(0, 0))};
  const uint64_t at_9000[1] = {9000};
  EXPECT_EQ(port->tx_burst_at(at_9000, xon, 1), 1);
  EXPECT_EQ(rx(*port, 9000), 1);
  EXPECT_EQ(port->host_paused_ns(), 5120u + 1000);

  // A PAUSE stamped ahead of the clock (2 quanta, 1024 ns at 12000) lets the
  // host send until it arrives.
  rte_mbuf* pause2[1] = {make(pause_frame(2))};
  const uint64_t at_12000[1] = {12'000};
  EXPECT_EQ(port->tx_burst_at(at_12000, pause2, 1), 1);
  EXPECT_EQ(rx(*port, 11'000), 2);  // starts 10'000 and 11'000
  EXPECT_EQ(rx(*port, 12'000), 0);
  EXPECT_EQ(rx(*port, 13'023), 0);
  EXPECT_EQ(rx(*port, 13'024), 1);

  // PFC for class 3 holds only class-3 frames: this host's go on.
  rte_mbuf* pfc3[1] = {make(pfc_class(3, 0xFFFF))};
  const uint64_t at_14000[1] = {14'000};
  EXPECT_EQ(port->tx_burst_at(at_14000, pfc3, 1), 1);
  EXPECT_EQ(rx(*port, 14'024), 1);
  EXPECT_TRUE(port->rx_done());
  EXPECT_EQ(port->rx_frames(), 9u);
  // Summed over the priorities: class 3 has been paused 24 ns at the last poll.
  EXPECT_EQ(port->host_paused_ns(), 5120u + 1000 + 1024 + 24);
  EXPECT_EQ(port->host_pause_frames(), 5u);
  EXPECT_EQ(port->max_lateness_ns(), 1000u);  // the frame that could start at 10'000

  // Everything sent toward the host is in its capture, control frames included.
  std::string error;
  ASSERT_TRUE(port->flush(&error)) << error;
  EXPECT_EQ(port->tx_frames(), 6u);
  const Bytes got = slurp(tx_path);
  ASSERT_EQ(got.size(), 24u + 6 * (16 + 60));
  EXPECT_TRUE(Bytes(got.begin() + 24 + 16, got.begin() + 24 + 16 + 60) == pause_frame(10));
  std::remove(tx_path.c_str());
}

// A UDP/IPv4 frame of 101 bytes to 10.0.0.<dst> with DSCP `dscp`.
Bytes ipv4_frame(uint8_t dst, uint8_t dscp) {
  Bytes f = {0x02, 0, 0, 0, 0, 0x09, 0x02, 0, 0, 0, 0, 0x01, 0x08, 0x00};
  const uint16_t ip_len = 101 - 14;
  const Bytes ip = {0x45,
                    static_cast<uint8_t>(dscp << 2),
                    uint8_t(ip_len >> 8),
                    uint8_t(ip_len),
                    0,
                    0,
                    0,
                    0,
                    64,
                    17,
                    0,
                    0,
                    10,
                    0,
                    0,
                    1,
                    10,
                    0,
                    0,
                    dst};
  f.insert(f.end(), ip.begin(), ip.end());
  const uint16_t sum = ipv4_header_checksum(f.data() + 14, 20);
  f[14 + 10] = static_cast<uint8_t>(sum >> 8);
  f[14 + 11] = static_cast<uint8_t>(sum);
  const Bytes udp = {0x30, 0x39, 0x30, 0x39, 0, uint8_t(ip_len - 20), 0, 0};
  f.insert(f.end(), udp.begin(), udp.end());
  f.resize(101, 0xAB);
  return f;
}

// A BFC control frame from the switch to the host (docs/wire-formats.md).
Bytes bfc_control(uint8_t type, uint8_t shard, uint16_t queue) {
  const Bytes head = {0x02,
                      0,
                      0,
                      0,
                      0,
                      0x01,
                      0x02,
                      0,
                      0,
                      0,
                      0,
                      0x09,
                      0x88,
                      0xB5,
                      'S',
                      'L',
                      1,
                      type,
                      0,
                      2,
                      shard,
                      0,
                      uint8_t(queue >> 8),
                      uint8_t(queue)};
  Bytes f(60, 0);
  std::copy(head.begin(), head.end(), f.begin());
  return f;
}

class BfcNicPortTest : public HostNicPortTest {
 protected:
  std::unique_ptr<PcapPort> open_bfc_host() {
    HostNicConfig nic;
    nic.overhead_bytes = 24 - 6;  // so that a shimmed 107-byte frame takes 1000 ns
    nic.bfc = true;
    return open_two_destination_host("pcap_port_bfc.pcap", nic);
  }
  // The queue named by the shim of a received frame (and checks its layout).
  static int shim_queue(rte_mbuf* m) {
    const uint8_t* p = rte_pktmbuf_mtod(m, const uint8_t*);
    if (m->pkt_len != 107 || p[12] != 0x88 || p[13] != 0xB6) return -1;
    if (p[18] != 0x08 || p[19] != 0x00 || p[20] != 0x45) return -2;  // inner type, then IPv4
    return p[14] << 8 | p[15];
  }
  std::vector<int> rx_queues(PcapPort& port, uint64_t now_ns) {
    rte_mbuf* pkts[8];
    const uint16_t got = port.rx_burst(now_ns, pkts, 8);
    std::vector<int> q;
    for (uint16_t i = 0; i < got; ++i) q.push_back(shim_queue(pkts[i]));
    rte_pktmbuf_free_bulk(pkts, got);
    return q;
  }
};

TEST_F(BfcNicPortTest, FramesNameTheirQueueAndABfcPauseHoldsOnlyThatDestination) {
  auto port = open_bfc_host();
  ASSERT_NE(port, nullptr);
  port->start(0, port->first_timestamp_ns());
  // Each destination has its own queue; they take turns at line rate.
  EXPECT_EQ(rx_queues(*port, 0), (std::vector<int>{0}));
  EXPECT_EQ(rx_queues(*port, 1000), (std::vector<int>{1}));
  // The switch pauses queue 0 (10.0.0.2) at 1500 and resumes it at 6000.
  rte_mbuf* pause[1] = {make(bfc_control(3, 2, 0))};
  const uint64_t at_1500[1] = {1500};
  EXPECT_EQ(port->tx_burst_at(at_1500, pause, 1), 1);
  EXPECT_EQ(rx_queues(*port, 2000), (std::vector<int>{1}));
  EXPECT_EQ(rx_queues(*port, 3000), (std::vector<int>{1}));
  EXPECT_EQ(rx_queues(*port, 5900), (std::vector<int>{}));
  EXPECT_EQ(port->host_bfc_paused_mask(), 1u);
  EXPECT_EQ(port->host_held_frames(), 2u);
  EXPECT_FALSE(port->rx_done()) << "frames still wait in the NIC";
  rte_mbuf* resume[1] = {make(bfc_control(4, 2, 0))};
  const uint64_t at_6000[1] = {6000};
  EXPECT_EQ(port->tx_burst_at(at_6000, resume, 1), 1);
  EXPECT_EQ(rx_queues(*port, 6000), (std::vector<int>{0}));
  EXPECT_EQ(rx_queues(*port, 7000), (std::vector<int>{0}));
  EXPECT_TRUE(port->rx_done());
  EXPECT_EQ(port->rx_frames(), 6u);
  EXPECT_EQ(port->host_bfc_frames(), 2u);
  EXPECT_EQ(port->host_invalid_frames(), 0u);
  // The held frames were delayed, not late: lateness measures the worker only.
  EXPECT_EQ(port->max_lateness_ns(), 0u);
}

TEST_F(BfcNicPortTest, MalformedBfcFramesAreCountedAndChangeNothing) {
  auto port = open_bfc_host();
  ASSERT_NE(port, nullptr);
  port->start(0, port->first_timestamp_ns());
  Bytes bad = bfc_control(3, 0, 0);
  bad[16] = 9;  // version 9
  rte_mbuf* f[1] = {make(bad)};
  EXPECT_EQ(port->tx_burst(0, f, 1), 1);
  EXPECT_EQ(rx_queues(*port, 0), (std::vector<int>{0}));
  EXPECT_EQ(port->host_invalid_frames(), 1u);
  EXPECT_EQ(port->host_bfc_paused_mask(), 0u);
}

class FloodgateNicPortTest : public HostNicPortTest {
 protected:
  std::unique_ptr<PcapPort> open_floodgate_host() {
    HostNicConfig nic;
    nic.overhead_bytes = 24;  // a 101-byte frame takes 1000 ns
    nic.floodgate = true;
    return open_two_destination_host("pcap_port_floodgate.pcap", nic);
  }
  // FG_DST_PAUSE from the switch naming 10.0.0.<dst>.
  rte_mbuf* dst_pause(uint8_t dst, bool pause) {
    Bytes f(64);
    const DstPauseEntry e[1] = {{0x0A000000u | dst, pause}};
    const ControlListFrame b =
        build_fg_dst_pause(f.data(), 64, 1500, {2, 0, 0, 0, 0, 1}, {2, 0, 0, 0, 0, 9}, 0, e);
    f.resize(b.len);
    return make(f);
  }
  // The last address byte of each received frame's IPv4 destination.
  std::vector<int> rx_dsts(PcapPort& port, uint64_t now_ns) {
    rte_mbuf* pkts[8];
    const uint16_t got = port.rx_burst(now_ns, pkts, 8);
    std::vector<int> d;
    for (uint16_t i = 0; i < got; ++i) d.push_back(rte_pktmbuf_mtod(pkts[i], const uint8_t*)[33]);
    rte_pktmbuf_free_bulk(pkts, got);
    return d;
  }
};

TEST_F(FloodgateNicPortTest, ADstPauseHoldsOnlyThatDestinationUntilItsResume) {
  auto port = open_floodgate_host();
  ASSERT_NE(port, nullptr);
  port->start(0, port->first_timestamp_ns());
  EXPECT_EQ(rx_dsts(*port, 0), (std::vector<int>{2}));
  rte_mbuf* pause[1] = {dst_pause(2, true)};
  const uint64_t at_500[1] = {500};
  EXPECT_EQ(port->tx_burst_at(at_500, pause, 1), 1);
  EXPECT_EQ(rx_dsts(*port, 1000), (std::vector<int>{3}));
  EXPECT_EQ(rx_dsts(*port, 2000), (std::vector<int>{3}));
  EXPECT_EQ(rx_dsts(*port, 3000), (std::vector<int>{3}));
  EXPECT_EQ(rx_dsts(*port, 5000), (std::vector<int>{}));
  EXPECT_EQ(port->host_nic().dst_paused(), 1u);
  EXPECT_EQ(port->host_held_frames(), 2u);
  rte_mbuf* resume[1] = {dst_pause(2, false)};
  const uint64_t at_6000[1] = {6000};
  EXPECT_EQ(port->tx_burst_at(at_6000, resume, 1), 1);
  EXPECT_EQ(rx_dsts(*port, 6000), (std::vector<int>{2}));
  EXPECT_EQ(rx_dsts(*port, 7000), (std::vector<int>{2}));
  EXPECT_TRUE(port->rx_done());
  EXPECT_EQ(port->host_dst_pause_frames(), 2u);
  EXPECT_EQ(port->host_invalid_frames(), 0u);
  EXPECT_EQ(port->max_lateness_ns(), 0u);
}

// A record cut by the capture's snaplen goes at its wire length: the
// captured bytes, then zeros; one whose wire length exceeds the mbuf is
// left out like any oversize frame.
TEST_F(PcapPortTest, SnaplenCutRecordsReplayAtTheirWireLength) {
  const std::string path = write_capture("pcap_port_cut.pcap", {{1000, 0, frame_of(128, 7), 1514},
                                                                {1000, 1, frame_of(128, 8), 9000},
                                                                {1000, 2, frame_of(60, 9)}});
  PcapPortConfig cfg;
  cfg.rx_path = path;
  cfg.mode = PcapReplayMode::kFast;
  std::string error;
  auto port = PcapPort::open(cfg, mbufs_, &error);
  ASSERT_NE(port, nullptr) << error;
  EXPECT_EQ(port->oversize_skipped(), 1u);
  EXPECT_EQ(port->oversize_largest(), 9000u);
  port->start(0, 0);
  rte_mbuf* pkts[4];
  ASSERT_EQ(port->rx_burst(0, pkts, 4), 2);
  EXPECT_EQ(pkts[0]->pkt_len, 1514u);
  const Bytes got = bytes_of(pkts[0]);
  ASSERT_EQ(got.size(), 1514u);
  const Bytes head = frame_of(128, 7);
  EXPECT_TRUE(std::equal(head.begin(), head.end(), got.begin()));
  EXPECT_TRUE(std::all_of(got.begin() + 128, got.end(), [](uint8_t b) { return b == 0; }));
  EXPECT_EQ(bytes_of(pkts[1]), frame_of(60, 9));
  EXPECT_EQ(port->rx_bytes(), 1514u + 60);
  rte_pktmbuf_free(pkts[0]);
  rte_pktmbuf_free(pkts[1]);
  std::remove(path.c_str());
}

TEST_F(PcapPortTest, OpenErrors) {
  std::string error;
  PcapPortConfig missing;
  missing.rx_path = "/nonexistent/h0.pcap";
  EXPECT_EQ(PcapPort::open(missing, mbufs_, &error), nullptr);
  EXPECT_EQ(error, "cannot open /nonexistent/h0.pcap: No such file or directory");

  const std::string text = testing::TempDir() + "pcap_port_not.pcap";
  FILE* f = std::fopen(text.c_str(), "wb");
  std::fputs("not a capture at all\n", f);
  std::fclose(f);
  PcapPortConfig bad;
  bad.rx_path = text;
  EXPECT_EQ(PcapPort::open(bad, mbufs_, &error), nullptr);
  EXPECT_EQ(error, text + " is not a pcap file");
  std::remove(text.c_str());

  PcapPortConfig unwritable;
  unwritable.rx_path = rx_path_;
  unwritable.tx_path = "/nonexistent/out.pcap";
  EXPECT_EQ(PcapPort::open(unwritable, mbufs_, &error), nullptr);
  EXPECT_EQ(error, "cannot open /nonexistent/out.pcap for writing: No such file or directory");
}

}  // namespace
}  // namespace sluice

int main(int argc, char** argv) {
  return sluice::run_tests_with_eal(argc, argv, "pcapport-test", "512");
}
