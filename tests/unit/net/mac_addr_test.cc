#include "lib/net/mac_addr.h"

#include <gtest/gtest.h>

namespace sluice {
namespace {

TEST(MacAddr, ParsesColonAndDashForms) {
  MacAddr mac{};
  ASSERT_TRUE(parse_mac("02:1A:ff:00:9b:10", &mac));
  EXPECT_EQ(mac, (MacAddr{0x02, 0x1a, 0xff, 0x00, 0x9b, 0x10}));
  ASSERT_TRUE(parse_mac("aa-bb-cc-dd-ee-ff", &mac));
  EXPECT_EQ(mac, (MacAddr{0xaa, 0xbb, 0xcc, 0xdd, 0xee, 0xff}));
}

TEST(MacAddr, RejectsMalformed) {
  MacAddr mac{1, 2, 3, 4, 5, 6};
  const MacAddr before = mac;
  for (const char* bad :
       {"", "02:00:00:00:00", "02:00:00:00:00:0", "02:00:00:00:00:001", "02:00-00:00:00:01",
        "g2:00:00:00:00:01", "02.00.00.00.00.01", "2:00:00:00:00:01:", " 02:00:00:00:00:01"}) {
    EXPECT_FALSE(parse_mac(bad, &mac)) << bad;
  }
  EXPECT_EQ(mac, before);  // untouched on failure
}

TEST(MacAddr, Formats) {
  EXPECT_EQ(format_mac({0x02, 0x00, 0xab, 0xcd, 0x0e, 0xff}), "02:00:ab:cd:0e:ff");
}

TEST(Ipv4Text, ParsesToHostOrder) {
  uint32_t a = 0;
  ASSERT_TRUE(parse_ipv4("10.1.2.3", &a));
  EXPECT_EQ(a, 0x0A010203u);
  ASSERT_TRUE(parse_ipv4("255.255.255.255", &a));
  EXPECT_EQ(a, 0xFFFFFFFFu);
  ASSERT_TRUE(parse_ipv4("0.0.0.0", &a));
  EXPECT_EQ(a, 0u);
}

TEST(Ipv4Text, RejectsMalformed) {
  uint32_t a = 7;
  for (const char* bad :
       {"", "1.2.3", "1.2.3.4.5", "256.0.0.1", "1..2.3", "1.2.3.4.", ".1.2.3.4", "01.2.3.4",
        "1.2.3.a", "1.2.3.4 ", "-1.2.3.4", "1.2.3.1000", "+1.2.3.4"}) {
    EXPECT_FALSE(parse_ipv4(bad, &a)) << bad;
  }
  EXPECT_EQ(a, 7u);
}

TEST(Ipv4Text, Formats) {
  EXPECT_EQ(format_ipv4(0xC0A80001u), "192.168.0.1");
  EXPECT_EQ(format_ipv4(0), "0.0.0.0");
  EXPECT_EQ(format_ipv4(0xFFFFFFFFu), "255.255.255.255");
}

TEST(Ipv4Prefix, Parses) {
  Ipv4Prefix p;
  ASSERT_TRUE(parse_ipv4_prefix("10.0.0.0/8", &p));
  EXPECT_EQ(p.addr, 0x0A000000u);
  EXPECT_EQ(p.len, 8);
  ASSERT_TRUE(parse_ipv4_prefix("0.0.0.0/0", &p));
  EXPECT_EQ(p.addr, 0u);
  EXPECT_EQ(p.len, 0);
  ASSERT_TRUE(parse_ipv4_prefix("10.1.2.3/32", &p));
  EXPECT_EQ(p.addr, 0x0A010203u);
  EXPECT_EQ(p.len, 32);
  ASSERT_TRUE(parse_ipv4_prefix("172.16.0.0/12", &p));
  EXPECT_EQ(p.len, 12);
}

TEST(Ipv4Prefix, RejectsHostBitsAndMalformed) {
  Ipv4Prefix p;
  for (const char* bad : {"10.0.0.1/8", "10.0.0.0/33", "10.0.0.0", "10.0.0.0/", "10.0.0.0/-1",
                          "10.0.0.0/08", "172.17.0.0/12", "1.0.0.0/0", "10.0.0.0/8/8"}) {
    EXPECT_FALSE(parse_ipv4_prefix(bad, &p)) << bad;
  }
}

TEST(Ipv4Prefix, Mask) {
  EXPECT_EQ(prefix_mask(0), 0u);
  EXPECT_EQ(prefix_mask(8), 0xFF000000u);
  EXPECT_EQ(prefix_mask(31), 0xFFFFFFFEu);
  EXPECT_EQ(prefix_mask(32), 0xFFFFFFFFu);
}

}  // namespace
}  // namespace sluice
