#include "lib/emulator/hosts/flow_list.h"

#include <gtest/gtest.h>

#include "lib/net/mac_addr.h"

namespace sluice {
namespace {

const char* kHeader =
    "flow_id,src,dst,src_ip,dst_ip,size,packets,arrival_time,start_time,end_time,is_incast\n";

TEST(FlowList, ReadsWorkloadCsv) {
  std::string text = std::string(kHeader) +
                     "1,h4,h1,10.0.4.2,10.0.1.2,418655,290,0.001285796,0.0013,0.0016,0\n"
                     "2,h0,h5,10.0.0.2,10.0.5.2,56608,40,2.5,2.5,2.6,1\n";
  std::vector<FlowListEntry> f;
  std::string err;
  ASSERT_TRUE(parse_flow_list(text, "x.csv", &f, &err)) << err;
  ASSERT_EQ(f.size(), 2u);
  EXPECT_EQ(f[0].id, 1u);
  EXPECT_EQ(f[0].src_ip, 0x0A000402u);
  EXPECT_EQ(f[0].dst_ip, 0x0A000102u);
  EXPECT_EQ(f[0].bytes, 418655u);
  EXPECT_EQ(f[0].start_ns, 1'285'796u);
  EXPECT_FALSE(f[0].incast);
  EXPECT_EQ(f[1].start_ns, 2'500'000'000u);
  EXPECT_TRUE(f[1].incast);
  EXPECT_EQ(f[1].line, 3u);
  EXPECT_EQ(format_ipv4(f[1].src_ip), "10.0.0.2");
}

TEST(FlowList, ErrorsNameFileLineAndReason) {
  std::vector<FlowListEntry> f;
  std::string err;
  auto bad = [&](const std::string& row) {
    EXPECT_FALSE(parse_flow_list(std::string(kHeader) + row, "w.csv", &f, &err)) << row;
    return err;
  };
  EXPECT_EQ(bad("1,a,b,10.0.0.1,10.0.0.2,0,1,0.1,0,0,0\n"), "w.csv:2: flow 1 has size 0");
  EXPECT_NE(bad("1,a,b,10.0.0.1,10.0.0.2,4294967296,1,0.1,0,0,0\n").find("sequence space"),
            std::string::npos);
  EXPECT_EQ(bad("1,a,b,10.0.0.1,10.0.0.1,5,1,0.1,0,0,0\n"),
            "w.csv:2: flow 1 goes from a host to itself");
  EXPECT_EQ(bad("1,a,b,10.0.0.1,10.0.0.300,5,1,0.1,0,0,0\n"), "w.csv:2: bad dst_ip '10.0.0.300'");
  EXPECT_EQ(bad("1,a,b,10.0.0.1,10.0.0.2,5,1,0.1234567891,0,0,0\n").substr(0, 29),
            "w.csv:2: bad arrival_time '0.");
  EXPECT_EQ(bad("1,a,b,10.0.0.1,10.0.0.2,5,1,0.1,0,0\n"), "w.csv:2: expected 11 columns, found 10");
  EXPECT_EQ(bad("1,a,b,10.0.0.1,10.0.0.2,5,1,0.1,0,0,0\n1,a,b,10.0.0.1,10.0.0.2,5,1,0.1,0,0,0\n"),
            "w.csv:3: flow id 1 appears twice");
  EXPECT_FALSE(parse_flow_list("a,b\n1,2\n", "h.csv", &f, &err));
  EXPECT_EQ(err.substr(0, 8), "h.csv:1:");
  EXPECT_FALSE(parse_flow_list("", "e.csv", &f, &err));
  EXPECT_FALSE(read_flow_list("/nonexistent/flows.csv", &f, &err));
  EXPECT_EQ(err, "cannot open flow list /nonexistent/flows.csv");
}

}  // namespace
}  // namespace sluice
