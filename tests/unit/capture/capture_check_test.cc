// check_captures(): what --check says about the captures a configuration
// replays, on files written here (classic pcap, little-endian, microseconds).
#include "lib/capture/capture_check.h"

#include <gtest/gtest.h>

#include <cstdio>
#include <string>
#include <vector>

#include "lib/config/config_loader.h"

namespace sluice {
namespace {

void put32(std::vector<uint8_t>* b, uint32_t v) {
  for (int i = 0; i < 4; ++i) b->push_back(static_cast<uint8_t>(v >> (8 * i)));
}

// A capture of frames of the given lengths.
std::string write_capture(const std::string& name, const std::vector<uint32_t>& lengths) {
  std::vector<uint8_t> img;
  put32(&img, 0xa1b2c3d4);
  put32(&img, 2 | (4u << 16));  // version 2.4
  put32(&img, 0);               // thiszone
  put32(&img, 0);               // sigfigs
  put32(&img, 65535);           // snaplen
  put32(&img, 1);               // Ethernet
  for (uint32_t len : lengths) {
    for (uint32_t v : {1u, 0u, len, len}) put32(&img, v);
    img.insert(img.end(), len, 0xab);
  }
  const std::string path = testing::TempDir() + name;
  FILE* f = std::fopen(path.c_str(), "wb");
  EXPECT_NE(f, nullptr);
  EXPECT_EQ(std::fwrite(img.data(), 1, img.size(), f), img.size());
  std::fclose(f);
  return path;
}

// Line 1 is mbuf_size (if any); p0 (rx on line 9) and p1 (rx on line 16)
// replay captures; p2 only writes one.
Config config_with(const std::string& mbuf_size, const std::string& rx0, const std::string& rx1) {
  const ConfigResult r = load_config_string(mbuf_size + R"(
switches:
  - name: s1
    ports:
      - name: p0
        role: host
        rate: 10Gbps
        pcap:
          rx: )" + rx0 + R"(
          tx: /tmp/capture_check_test_out0.pcap
      - name: p1
        role: host
        rate: 10Gbps
        pcap:
          mode: fast
          rx: )" + rx1 + R"(
      - name: p2
        role: host
        rate: 10Gbps
        pcap:
          tx: /nonexistent/dir/out.pcap
)",
                                            "t.yaml");
  EXPECT_TRUE(r.ok()) << r.errors[0].to_string();
  return r.config;
}

TEST(CaptureCheck, ReadableCapturesPass) {
  const std::string a = write_capture("capture_check_a.pcap", {64, 1514});
  const std::string b = write_capture("capture_check_b.pcap", {2048});
  const CaptureCheck c = check_captures(config_with("", a, b));
  EXPECT_TRUE(c.errors.empty()) << c.errors[0].to_string();
  EXPECT_TRUE(c.notes.empty()) << c.notes[0].to_string();
  std::remove(a.c_str());
  std::remove(b.c_str());
}

TEST(CaptureCheck, NamesFileLineKeyPortAndReason) {
  const std::string a = write_capture("capture_check_c.pcap", {64});
  const std::string not_pcap = testing::TempDir() + "capture_check_not.pcap";
  FILE* f = std::fopen(not_pcap.c_str(), "wb");
  ASSERT_NE(f, nullptr);
  std::fputs("this is not a capture file at all", f);
  std::fclose(f);
  CaptureCheck c = check_captures(config_with("", "/nonexistent/missing.pcap", not_pcap));
  ASSERT_EQ(c.errors.size(), 2u);
  EXPECT_EQ(c.errors[0].to_string(),
            "t.yaml:9: switches[0].ports[0].pcap.rx: switch s1 port p0: cannot open "
            "/nonexistent/missing.pcap: No such file or directory");
  EXPECT_EQ(c.errors[1].to_string(),
            "t.yaml:16: switches[0].ports[1].pcap.rx: switch s1 port "
            "p1: " +
                not_pcap + " is not a pcap file");
  c = check_captures(config_with("", a, "/nonexistent/missing.pcap"));
  ASSERT_EQ(c.errors.size(), 1u);
  EXPECT_EQ(c.errors[0].key, "switches[0].ports[1].pcap.rx");
  std::remove(a.c_str());
  std::remove(not_pcap.c_str());
}

TEST(CaptureCheck, FramesLongerThanMbufSizeAreANote) {
  const std::string a = write_capture("capture_check_d.pcap", {64, 2049, 4000, 100});
  const std::string b = write_capture("capture_check_e.pcap", {64});
  CaptureCheck c = check_captures(config_with("", a, b));
  EXPECT_TRUE(c.errors.empty());
  ASSERT_EQ(c.notes.size(), 1u);
  EXPECT_EQ(c.notes[0].to_string(),
            "t.yaml:9: switches[0].ports[0].pcap.rx: switch s1 port p0: 2 frame(s) of " + a +
                " (up to 4000 bytes) are larger than mbuf_size (2048 bytes) and will be left "
                "out of the replay; raise mbuf_size to replay them");
  c = check_captures(config_with("mbuf_size: 4000", a, b));
  EXPECT_TRUE(c.errors.empty());
  EXPECT_TRUE(c.notes.empty()) << c.notes[0].to_string();
  std::remove(a.c_str());
  std::remove(b.c_str());
}

}  // namespace
}  // namespace sluice
