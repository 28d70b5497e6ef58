#include "lib/config/units.h"

#include <gtest/gtest.h>

namespace sluice {
namespace {

TEST(ParseRate, AcceptsEveryUnitSpelling) {
  EXPECT_EQ(parse_rate_bps("10Gbps"), 10'000'000'000u);
  EXPECT_EQ(parse_rate_bps("10G"), 10'000'000'000u);
  EXPECT_EQ(parse_rate_bps("10Gbit/s"), 10'000'000'000u);
  EXPECT_EQ(parse_rate_bps("10Gb/s"), 10'000'000'000u);
  EXPECT_EQ(parse_rate_bps("10gbps"), 10'000'000'000u);
  EXPECT_EQ(parse_rate_bps("100Mbps"), 100'000'000u);
  EXPECT_EQ(parse_rate_bps("100M"), 100'000'000u);
  EXPECT_EQ(parse_rate_bps("64Kbps"), 64'000u);
  EXPECT_EQ(parse_rate_bps("64k"), 64'000u);
  EXPECT_EQ(parse_rate_bps("1Tbps"), 1'000'000'000'000u);
  EXPECT_EQ(parse_rate_bps("9600bps"), 9'600u);
  EXPECT_EQ(parse_rate_bps("9600bit/s"), 9'600u);
}

TEST(ParseRate, FractionsSpacesAndZero) {
  EXPECT_EQ(parse_rate_bps("2.5Gbps"), 2'500'000'000u);
  EXPECT_EQ(parse_rate_bps("0.1Gbps"), 100'000'000u);
  EXPECT_EQ(parse_rate_bps("1.544Mbps"), 1'544'000u);
  EXPECT_EQ(parse_rate_bps(" 40 Gbps "), 40'000'000'000u);
  EXPECT_EQ(parse_rate_bps("0"), 0u);
  EXPECT_EQ(parse_rate_bps("0Gbps"), 0u);
}

TEST(ParseRate, RefusesBadText) {
  EXPECT_EQ(parse_rate_bps("10"), std::nullopt);  // bare number: unit missing
  EXPECT_EQ(parse_rate_bps("1.5"), std::nullopt);
  EXPECT_EQ(parse_rate_bps(""), std::nullopt);
  EXPECT_EQ(parse_rate_bps("Gbps"), std::nullopt);
  EXPECT_EQ(parse_rate_bps("10 furlongs"), std::nullopt);
  EXPECT_EQ(parse_rate_bps("10GBps"), std::nullopt);  // bytes per second is not a rate unit here
  EXPECT_EQ(parse_rate_bps("10Pbps"), std::nullopt);
  EXPECT_EQ(parse_rate_bps("-1Gbps"), std::nullopt);
  EXPECT_EQ(parse_rate_bps("1e9bps"), std::nullopt);
  EXPECT_EQ(parse_rate_bps("10.Gbps"), std::nullopt);
  EXPECT_EQ(parse_rate_bps(".5Gbps"), std::nullopt);
  EXPECT_EQ(parse_rate_bps("1.5bps"), std::nullopt);        // not a whole number of bits
  EXPECT_EQ(parse_rate_bps("20000000Tbps"), std::nullopt);  // 2e19 > uint64 max
}

TEST(ParseSize, DecimalAndBinaryUnits) {
  EXPECT_EQ(parse_size_bytes("1500"), 1500u);
  EXPECT_EQ(parse_size_bytes("1500B"), 1500u);
  EXPECT_EQ(parse_size_bytes("100KB"), 100'000u);
  EXPECT_EQ(parse_size_bytes("100kB"), 100'000u);
  EXPECT_EQ(parse_size_bytes("12MB"), 12'000'000u);
  EXPECT_EQ(parse_size_bytes("2GB"), 2'000'000'000u);
  EXPECT_EQ(parse_size_bytes("1TB"), 1'000'000'000'000u);
  EXPECT_EQ(parse_size_bytes("1KiB"), 1024u);
  EXPECT_EQ(parse_size_bytes("12MiB"), 12u * 1024 * 1024);
  EXPECT_EQ(parse_size_bytes("1GiB"), 1073741824u);
  EXPECT_EQ(parse_size_bytes("1TiB"), 1099511627776u);
  EXPECT_EQ(parse_size_bytes("1.5MB"), 1'500'000u);
  EXPECT_EQ(parse_size_bytes("0.5KiB"), 512u);
  EXPECT_EQ(parse_size_bytes("64 B"), 64u);
  EXPECT_EQ(parse_size_bytes("0"), 0u);
}

TEST(ParseSize, RefusesBadText) {
  EXPECT_EQ(parse_size_bytes("12 megabytes"), std::nullopt);
  EXPECT_EQ(parse_size_bytes("12mb"), std::nullopt);
  EXPECT_EQ(parse_size_bytes("12Mb"), std::nullopt);    // bits, not bytes
  EXPECT_EQ(parse_size_bytes("1.5"), std::nullopt);     // bare number must be whole bytes
  EXPECT_EQ(parse_size_bytes("0.3KiB"), std::nullopt);  // 307.2 bytes
  EXPECT_EQ(parse_size_bytes("KB"), std::nullopt);
  EXPECT_EQ(parse_size_bytes("-5B"), std::nullopt);
  EXPECT_EQ(parse_size_bytes("20000000TB"), std::nullopt);  // overflows uint64
}

TEST(ParseDuration, Units) {
  EXPECT_EQ(parse_duration_ns("500ns"), 500u);
  EXPECT_EQ(parse_duration_ns("10us"), 10'000u);
  EXPECT_EQ(parse_duration_ns("10\xC2\xB5s"), 10'000u);
  EXPECT_EQ(parse_duration_ns("1.5us"), 1'500u);
  EXPECT_EQ(parse_duration_ns("2ms"), 2'000'000u);
  EXPECT_EQ(parse_duration_ns("3s"), 3'000'000'000u);
  EXPECT_EQ(parse_duration_ns("0.25s"), 250'000'000u);
  EXPECT_EQ(parse_duration_ns("1 us"), 1'000u);
  EXPECT_EQ(parse_duration_ns("0"), 0u);
}

TEST(ParseDuration, RefusesBadText) {
  EXPECT_EQ(parse_duration_ns("10"), std::nullopt);  // bare number: unit missing
  EXPECT_EQ(parse_duration_ns("10 sec"), std::nullopt);
  EXPECT_EQ(parse_duration_ns("10m"), std::nullopt);
  EXPECT_EQ(parse_duration_ns("1.5ns"), std::nullopt);  // not a whole nanosecond
  EXPECT_EQ(parse_duration_ns("us"), std::nullopt);
  EXPECT_EQ(parse_duration_ns("1h"), std::nullopt);
}

}  // namespace
}  // namespace sluice
