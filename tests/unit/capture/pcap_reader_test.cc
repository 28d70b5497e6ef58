// Capture images are assembled byte by byte here, in both byte orders, so the
// reader is checked against the file format rather than against our writer.
#include "lib/capture/pcap_reader.h"

#include <gtest/gtest.h>

#include <cstdio>
#include <string>
#include <vector>

namespace sluice {
namespace {

using Bytes = std::vector<uint8_t>;

void put32(Bytes* b, uint32_t v, bool big_endian) {
  for (int i = 0; i < 4; ++i) {
    const int shift = big_endian ? 24 - 8 * i : 8 * i;
    b->push_back(static_cast<uint8_t>(v >> shift));
  }
}

void put16(Bytes* b, uint16_t v, bool big_endian) {
  b->push_back(static_cast<uint8_t>(big_endian ? v >> 8 : v));
  b->push_back(static_cast<uint8_t>(big_endian ? v : v >> 8));
}

Bytes file_header(uint32_t magic, bool big_endian, uint32_t link_type = 1, uint16_t major = 2) {
  Bytes b;
  put32(&b, magic, big_endian);
  put16(&b, major, big_endian);
  put16(&b, 4, big_endian);
  put32(&b, 0, big_endian);      // thiszone
  put32(&b, 0, big_endian);      // sigfigs
  put32(&b, 65535, big_endian);  // snaplen
  put32(&b, link_type, big_endian);
  return b;
}

void record(Bytes* b, bool big_endian, uint32_t sec, uint32_t frac, const Bytes& frame,
            uint32_t origlen = 0) {
  put32(b, sec, big_endian);
  put32(b, frac, big_endian);
  put32(b, static_cast<uint32_t>(frame.size()), big_endian);
  put32(b, origlen ? origlen : static_cast<uint32_t>(frame.size()), big_endian);
  b->insert(b->end(), frame.begin(), frame.end());
}

Bytes frame_of(size_t len, uint8_t seed) {
  Bytes f(len);
  for (size_t i = 0; i < len; ++i) f[i] = static_cast<uint8_t>(seed + i * 3);
  return f;
}

struct Variant {
  uint32_t magic;
  bool big_endian;
  uint32_t frac1, frac2;  // fraction fields as written
  uint64_t ns1, ns2;      // what they mean
};

TEST(PcapReader, ReadsMicroAndNanoInBothByteOrders) {
  const Variant variants[] = {
      {0xa1b2c3d4, false, 250'000, 999'999, 1'700'000'000'250'000'000, 1'700'000'001'999'999'000},
      {0xa1b2c3d4, true, 250'000, 999'999, 1'700'000'000'250'000'000, 1'700'000'001'999'999'000},
      {0xa1b23c4d, false, 250'000, 999'999'999, 1'700'000'000'000'250'000,
       1'700'000'001'999'999'999},
      {0xa1b23c4d, true, 250'000, 999'999'999, 1'700'000'000'000'250'000,
       1'700'000'001'999'999'999},
  };
  for (const Variant& v : variants) {
    SCOPED_TRACE(testing::Message() << std::hex << v.magic << " big_endian=" << v.big_endian);
    Bytes img = file_header(v.magic, v.big_endian);
    const Bytes f1 = frame_of(60, 1), f2 = frame_of(1514, 9), f3 = frame_of(64, 200);
    record(&img, v.big_endian, 1'700'000'000, v.frac1, f1);
    record(&img, v.big_endian, 1'700'000'001, v.frac2, f2, 9000);  // snaplen-limited
    record(&img, v.big_endian, 0, 0, f3);
    PcapCapture c;
    std::string error;
    ASSERT_TRUE(parse_pcap(img, "x.pcap", &c, &error)) << error;
    EXPECT_EQ(c.nanosecond, v.magic == 0xa1b23c4d);
    EXPECT_EQ(c.snaplen, 65535u);
    ASSERT_EQ(c.records.size(), 3u);
    EXPECT_EQ(c.records[0].ts_ns, v.ns1);
    EXPECT_EQ(c.records[1].ts_ns, v.ns2);
    EXPECT_EQ(c.records[2].ts_ns, 0u);
    EXPECT_EQ(c.records[0].offset, 24u + 16u);
    EXPECT_EQ(c.records[1].offset, 24u + 16u + 60u + 16u);
    EXPECT_EQ(c.records[1].caplen, 1514u);
    EXPECT_EQ(c.records[1].origlen, 9000u);
    EXPECT_EQ(Bytes(c.frame(0), c.frame(0) + 60), f1);
    EXPECT_EQ(Bytes(c.frame(1), c.frame(1) + 1514), f2);
    EXPECT_EQ(Bytes(c.frame(2), c.frame(2) + 64), f3);
  }
}

TEST(PcapReader, HeaderOnlyIsAnEmptyCapture) {
  PcapCapture c;
  std::string error;
  ASSERT_TRUE(parse_pcap(file_header(0xa1b2c3d4, false), "e.pcap", &c, &error)) << error;
  EXPECT_TRUE(c.records.empty());
}

std::string error_of(const Bytes& img) {
  PcapCapture c;
  std::string error;
  EXPECT_FALSE(parse_pcap(img, "x.pcap", &c, &error));
  return error;
}

TEST(PcapReader, RefusesWhatItCannotReplay) {
  EXPECT_EQ(error_of({}), "x.pcap is not a pcap file (0 bytes)");
  EXPECT_EQ(error_of({'h', 'e', 'l', 'l', 'o', '\n'}), "x.pcap is not a pcap file");
  Bytes ng = {0x0a, 0x0d, 0x0d, 0x0a, 0x1c, 0, 0, 0};
  EXPECT_EQ(error_of(ng),
            "x.pcap is a pcapng file; only classic pcap is read (convert it with: editcap -F pcap "
            "x.pcap out.pcap)");
  EXPECT_EQ(error_of(file_header(0xa1b2c3d4, false, 113)),
            "x.pcap: unsupported link type 113 (only Ethernet, link type 1, is replayed)");
  EXPECT_EQ(error_of(file_header(0xa1b2c3d4, true, 101)),
            "x.pcap: unsupported link type 101 (only Ethernet, link type 1, is replayed)");
  EXPECT_EQ(error_of(file_header(0xa1b2c3d4, false, 1, 1)),
            "x.pcap: unsupported pcap version 1.4 (expected 2.x)");
  Bytes short_header = file_header(0xa1b23c4d, false);
  short_header.resize(20);
  EXPECT_EQ(error_of(short_header), "x.pcap is truncated (the file header needs 24 bytes)");
}

TEST(PcapReader, FcsBitsInLinkTypeAreIgnored) {
  // The top bits of the link-type field may say "FCS present, 4 bytes".
  PcapCapture c;
  std::string error;
  EXPECT_TRUE(parse_pcap(file_header(0xa1b2c3d4, false, 0x14000001), "x.pcap", &c, &error))
      << error;
}

TEST(PcapReader, RefusesTruncatedAndCorruptRecords) {
  Bytes img = file_header(0xa1b2c3d4, false);
  record(&img, false, 1, 0, frame_of(60, 0));
  Bytes cut_header = img;
  cut_header.insert(cut_header.end(), {1, 0, 0, 0, 0, 0});
  EXPECT_EQ(error_of(cut_header), "x.pcap: record 1 is truncated (end of file in its header)");
  Bytes cut_data = img;
  record(&cut_data, false, 1, 0, frame_of(100, 0));
  cut_data.resize(cut_data.size() - 30);
  EXPECT_EQ(error_of(cut_data), "x.pcap: record 1 is truncated (70 of 100 bytes present)");
  Bytes huge = img;
  put32(&huge, 1, false);
  put32(&huge, 0, false);
  put32(&huge, 300'000, false);
  put32(&huge, 300'000, false);
  EXPECT_EQ(error_of(huge), "x.pcap: record 1 claims 300000 bytes (corrupt file?)");
}

TEST(PcapReader, ReadsAFileAndReportsOpenErrors) {
  const std::string path = testing::TempDir() + "pcap_reader_test.pcap";
  Bytes img = file_header(0xa1b23c4d, true);
  record(&img, true, 3, 5, frame_of(42, 7));
  FILE* f = std::fopen(path.c_str(), "wb");
  ASSERT_NE(f, nullptr);
  ASSERT_EQ(std::fwrite(img.data(), 1, img.size(), f), img.size());
  std::fclose(f);
  PcapCapture c;
  std::string error;
  ASSERT_TRUE(read_pcap_file(path, &c, &error)) << error;
  ASSERT_EQ(c.records.size(), 1u);
  EXPECT_EQ(c.records[0].ts_ns, 3'000'000'005u);
  EXPECT_EQ(Bytes(c.frame(0), c.frame(0) + 42), frame_of(42, 7));
  std::remove(path.c_str());

  EXPECT_FALSE(read_pcap_file("/nonexistent/x.pcap", &c, &error));
  EXPECT_EQ(error, "cannot open /nonexistent/x.pcap: No such file or directory");
  EXPECT_FALSE(read_pcap_file("/", &c, &error));
  EXPECT_EQ(error, "cannot read /: Is a directory");
}

}  // namespace
}  // namespace sluice
