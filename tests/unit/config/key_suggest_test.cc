#include "lib/config/key_suggest.h"

#include <gtest/gtest.h>

namespace sluice {
namespace {

TEST(EditDistance, CountsEachEdit) {
  EXPECT_EQ(edit_distance("", ""), 0u);
  EXPECT_EQ(edit_distance("rate", "rate"), 0u);
  EXPECT_EQ(edit_distance("", "mtu"), 3u);
  EXPECT_EQ(edit_distance("rate", "rat"), 1u);    // deletion
  EXPECT_EQ(edit_distance("rate", "grate"), 1u);  // insertion
  EXPECT_EQ(edit_distance("rate", "rote"), 1u);   // substitution
  EXPECT_EQ(edit_distance("rtae", "rate"), 1u);   // adjacent swap
  EXPECT_EQ(edit_distance("rtae", "role"), 2u);
  EXPECT_EQ(edit_distance("kitten", "sitting"), 3u);
}

TEST(ClosestKey, SuggestsOnlyWithinTwoEdits) {
  EXPECT_EQ(closest_key("rtae", {"role", "rate", "mtu"}), "rate");
  EXPECT_EQ(closest_key("adress", {"enabled", "address"}), "address");
  EXPECT_EQ(closest_key("queue_capacty", {"queues_per_port", "queue_capacity"}), "queue_capacity");
  EXPECT_EQ(closest_key("bandwidth", {"rate", "mtu"}), "");
  EXPECT_EQ(closest_key("abc", {}), "");
}

}  // namespace
}  // namespace sluice
