// transit bench's records as JSON: whatever their length and values, one line that a JSON parser
// takes back whole. (The hand-written record of old was cut at 1024 bytes and printed "nan".)
#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <string>

#include "bench.hpp"

namespace {

using transit::bench::json;

transit::bench::record sample() {
  transit::bench::record r;
  r.kernel = "histogram";
  r.backend = "local";
  r.scheme_name = "grid";
  r.grid = "2x2";
  r.pes = 4;
  r.nodes = 1;
  r.item_bytes = 8;
  r.buffer_items = 1024;
  r.items_per_pe = 1000;
  r.seconds = 0.5;
  r.rate = 2000;
  r.messages_sent = std::numeric_limits<std::uint64_t>::max();  // must not turn into a double
  r.bytes_sent = 123;
  r.inter_node_messages = 45;
  r.verified = true;
  return r;
}

TEST(json_record, a_record_longer_than_a_kibibyte_stays_whole) {
  auto r = sample();
  r.grid = "2";
  for (int i = 0; i < 3000; ++i) r.grid += "x1";
  r.extra["note"] = std::string(2000, 'n');
  const std::string line = transit::bench::to_json(r);
  EXPECT_GT(line.size(), 8000u);
  EXPECT_EQ(line.find('\n'), std::string::npos);
  const auto parsed = json::parse(line);
  EXPECT_EQ(parsed["grid"], r.grid);
  EXPECT_EQ(parsed["note"].get<std::string>().size(), 2000u);
  EXPECT_EQ(parsed.begin().key(), "kernel");  // fields in API.md's order, the kernel's after
  EXPECT_EQ(parsed["messages_sent"].get<std::uint64_t>(), std::numeric_limits<std::uint64_t>::max());
  EXPECT_EQ(parsed["nodes"].get<int>(), 1);
  EXPECT_EQ(parsed["inter_node_messages"].get<std::uint64_t>(), 45u);
  EXPECT_TRUE(parsed["verified"].get<bool>());
}

TEST(json_record, numbers_stay_numbers_and_non_finite_ones_become_null) {
  auto r = sample();
  r.seconds = std::numeric_limits<double>::quiet_NaN();
  r.rate = std::numeric_limits<double>::infinity();
  r.extra["gups"] = -std::numeric_limits<double>::infinity();
  r.extra["table_slots"] = std::uint64_t{1000};
  r.extra["ratio"] = 0.25;
  const auto parsed = json::parse(transit::bench::to_json(r));
  EXPECT_TRUE(parsed["seconds"].is_null());
  EXPECT_TRUE(parsed["items_per_second_per_pe"].is_null());
  EXPECT_TRUE(parsed["gups"].is_null());
  EXPECT_TRUE(parsed["table_slots"].is_number_unsigned());
  EXPECT_EQ(parsed["ratio"].get<double>(), 0.25);
  EXPECT_TRUE(parsed["pes"].is_number_integer());
}

TEST(json_record, text_that_is_not_utf8_is_replaced_not_thrown_on) {
  auto r = sample();
  r.grid = "bad\xff";
  r.extra["quote"] = "say \"hi\"\n";
  const auto parsed = json::parse(transit::bench::to_json(r));
  EXPECT_EQ(parsed["grid"], "bad\xEF\xBF\xBD");  // U+FFFD
  EXPECT_EQ(parsed["quote"], "say \"hi\"\n");
}

TEST(json_record, the_text_line_shows_kernel_fields_for_people) {
  auto r = sample();
  r.extra["gups"] = 0.0123456789;
  r.extra["table_slots"] = 1000;
  const std::string line = transit::bench::to_text(r);
  EXPECT_NE(line.find("  gups 0.0123457"), std::string::npos) << line;
  EXPECT_NE(line.find("  table_slots 1000"), std::string::npos) << line;
  EXPECT_NE(line.find("verified"), std::string::npos) << line;
}

}  // namespace
