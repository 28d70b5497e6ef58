// The written file is compared byte for byte with an image assembled here
// from the pcap format (nanosecond magic, host byte order on x86: little endian).
// Records reach the writer as in sluice: encoded by a CaptureRing, drained
// into PcapWriter::write_bytes.
#include "lib/capture/pcap_writer.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cstdio>
#include <fstream>
#include <iterator>
#include <string>
#include <tuple>
#include <vector>

#include "lib/capture/capture_ring.h"
#include "lib/capture/pcap_reader.h"

namespace sluice {
namespace {

using Bytes = std::vector<uint8_t>;

void le32(Bytes* b, uint32_t v) {
  for (int i = 0; i < 4; ++i) b->push_back(static_cast<uint8_t>(v >> (8 * i)));
}

Bytes slurp(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return Bytes(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
}

Bytes pattern(size_t len, uint8_t seed) {
  Bytes f(len);
  for (size_t i = 0; i < len; ++i) f[i] = static_cast<uint8_t>(seed ^ (i * 7));
  return f;
}

// A capture port's producer and writer thread in one: records go into a
// CaptureRing with the writer's snaplen and are drained into the file.
class Recorder {
 public:
  explicit Recorder(PcapWriter* w) : w_(w), ring_(1u << 20, w->snaplen()) {}
  void begin_record(uint64_t ts_ns, uint32_t frame_len) {
    EXPECT_TRUE(ring_.begin_record(ts_ns, frame_len));
  }
  void append(const void* data, uint32_t len) {
    ring_.append(data, len);
    ring_.drain([this](const uint8_t* p, size_t n) { w_->write_bytes(p, n); });
  }
  void write_record(uint64_t ts_ns, const void* data, uint32_t len) {
    begin_record(ts_ns, len);
    append(data, len);
  }
  uint64_t records() const { return ring_.records(); }

 private:
  PcapWriter* w_;
  CaptureRing ring_;
};

TEST(PcapWriter, WritesNanosecondPcapExactly) {
  static_assert(__BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__, "expected image is little endian");
  const std::string path = testing::TempDir() + "pcap_writer_test.pcap";
  const Bytes a = pattern(60, 1), b = pattern(1514, 2), big = pattern(70'000, 3);
  PcapWriter w;
  std::string error;
  ASSERT_TRUE(w.open(path, &error)) << error;
  Recorder r(&w);
  r.write_record(1'700'000'000'123'456'789ull, a.data(), 60);
  r.begin_record(1'700'000'001'000'000'001ull, 1514);  // in three pieces, as mbuf segments
  r.append(b.data(), 1000);
  r.append(b.data() + 1000, 500);
  r.append(b.data() + 1500, 14);
  r.write_record(5, big.data(), 70'000);  // longer than the snaplen
  EXPECT_EQ(r.records(), 3u);
  ASSERT_TRUE(w.flush(&error)) << error;

  Bytes expected = {0x4d, 0x3c, 0xb2, 0xa1, 2, 0, 4, 0};
  le32(&expected, 0);
  le32(&expected, 0);
  le32(&expected, 65535);
  le32(&expected, 1);
  for (auto [sec, nsec, frame, orig] :
       {std::tuple{1'700'000'000u, 123'456'789u, &a, 60u},
        std::tuple{1'700'000'001u, 1u, &b, 1514u}, std::tuple{0u, 5u, &big, 70'000u}}) {
    const uint32_t cap = std::min<uint32_t>(orig, 65535);
    le32(&expected, sec);
    le32(&expected, nsec);
    le32(&expected, cap);
    le32(&expected, orig);
    expected.insert(expected.end(), frame->begin(), frame->begin() + cap);
  }
  EXPECT_EQ(slurp(path), expected);

  // And the reader agrees.
  w.close();
  PcapCapture c;
  ASSERT_TRUE(read_pcap_file(path, &c, &error)) << error;
  ASSERT_EQ(c.records.size(), 3u);
  EXPECT_TRUE(c.nanosecond);
  EXPECT_EQ(c.records[0].ts_ns, 1'700'000'000'123'456'789ull);
  EXPECT_EQ(c.records[2].caplen, 65535u);
  EXPECT_EQ(c.records[2].origlen, 70'000u);
  std::remove(path.c_str());
}

TEST(PcapWriter, SnaplenCutsFramesAndIsInTheHeader) {
  const std::string path = testing::TempDir() + "pcap_writer_snaplen.pcap";
  const Bytes a = pattern(1514, 4), b = pattern(60, 5);
  PcapWriter w;
  std::string error;
  ASSERT_TRUE(w.open(path, &error, 64 * 1024, 128)) << error;
  Recorder r(&w);
  r.begin_record(7, 1514);  // in two pieces, the cut falling in the first
  r.append(a.data(), 100);
  r.append(a.data() + 100, 1414);
  r.write_record(8, b.data(), 60);  // shorter than the snaplen: whole
  ASSERT_TRUE(w.flush(&error)) << error;

  Bytes expected = {0x4d, 0x3c, 0xb2, 0xa1, 2, 0, 4, 0};
  le32(&expected, 0);
  le32(&expected, 0);
  le32(&expected, 128);
  le32(&expected, 1);
  le32(&expected, 0);
  le32(&expected, 7);
  le32(&expected, 128);
  le32(&expected, 1514);
  expected.insert(expected.end(), a.begin(), a.begin() + 128);
  le32(&expected, 0);
  le32(&expected, 8);
  le32(&expected, 60);
  le32(&expected, 60);
  expected.insert(expected.end(), b.begin(), b.end());
  EXPECT_EQ(slurp(path), expected);
  w.close();
  std::remove(path.c_str());
}

TEST(PcapWriter, NothingReachesTheFileUntilFlushWithABigBuffer) {
  const std::string path = testing::TempDir() + "pcap_writer_buffered.pcap";
  PcapWriter w;
  std::string error;
  ASSERT_TRUE(w.open(path, &error)) << error;
  const Bytes f = pattern(1000, 4);
  Recorder r(&w);
  for (int i = 0; i < 100; ++i) r.write_record(i, f.data(), 1000);
  EXPECT_EQ(slurp(path).size(), 0u);  // 101 KB sits in the 4 MB buffer
  ASSERT_TRUE(w.flush(&error));
  EXPECT_EQ(slurp(path).size(), 24u + 100u * (16u + 1000u));
  w.close();
  std::remove(path.c_str());
}

TEST(PcapWriter, ReportsOpenAndWriteErrors) {
  PcapWriter w;
  std::string error;
  EXPECT_FALSE(w.open("/nonexistent/dir/x.pcap", &error));
  EXPECT_EQ(error, "cannot open /nonexistent/dir/x.pcap for writing: No such file or directory");
  EXPECT_FALSE(w.is_open());
  w.write_bytes("x", 1);  // harmless when not open

  // /dev/full accepts the open and fails every write with ENOSPC.
  ASSERT_TRUE(w.open("/dev/full", &error, 64)) << error;
  const Bytes f = pattern(200, 5);
  w.write_bytes(f.data(), 200);
  EXPECT_FALSE(w.flush(&error));
  EXPECT_EQ(error, "writing /dev/full failed: No space left on device");
  EXPECT_TRUE(w.failed());
}

}  // namespace
}  // namespace sluice
