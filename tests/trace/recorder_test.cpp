// The trace recorder alone (src/trace/recorder.hpp): the ring keeps the newest events and says how
// many it dropped, names are escaped, a send's annotation applies to that send only, both ends of a
// message agree on its flow arrow, a file that cannot be created is a warning, not a throw, and
// what the caller says (process name, backend, a received message's endpoint) is written as said.
#include "trace/recorder.hpp"

#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <string>

#include <nlohmann/json.hpp>

namespace transit::detail::trace {
namespace {

using nlohmann::json;

class recorder_test : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = std::filesystem::temp_directory_path() / ("transit-recorder-test-" + std::to_string(::getpid()));
    std::filesystem::create_directories(dir_);
  }
  void TearDown() override { std::filesystem::remove_all(dir_); }
  json written(recorder& r) {
    EXPECT_TRUE(r.write("end"));
    std::ifstream in(r.path());
    return json::parse(in);
  }
  std::filesystem::path dir_;
};

TEST_F(recorder_test, a_full_ring_keeps_the_newest_events_and_counts_the_rest) {
  recorder r(dir_.string(), 3, 4, 0, "local PEs", "local", 4);
  const std::uint32_t id = r.label("work", "i");
  for (int i = 0; i < 10; ++i) r.slice(id, 1000 * i, 1000 * i + 500, static_cast<std::uint64_t>(i));
  EXPECT_EQ(r.recorded(), 10u);
  EXPECT_EQ(r.dropped(), 6u);
  const json doc = written(r);
  EXPECT_EQ(doc["otherData"]["events_dropped"], 6);
  std::vector<int> kept;
  bool said = false;
  for (const json& e : doc["traceEvents"]) {
    if (e["ph"] == "X") kept.push_back(e["args"]["i"].get<int>());
    said |= e["ph"] == "M" && e["name"] == "transit_dropped" && e["args"]["dropped"] == 6;
    EXPECT_EQ(e["pid"], 0);
    EXPECT_EQ(e["tid"], 3);
  }
  EXPECT_EQ(kept, (std::vector<int>{6, 7, 8, 9}));  // the newest four, in time order
  EXPECT_TRUE(said);
}

TEST_F(recorder_test, names_are_escaped) {
  recorder r(dir_.string(), 0, 1, 0, "local PEs", "local", 16);
  const std::string name = "streamer<my::\"odd\"\\type>\n#1";
  r.instant(r.label(name), 10);
  const json doc = written(r);
  bool found = false;
  for (const json& e : doc["traceEvents"]) found |= e["ph"] == "i" && e["name"] == name;
  EXPECT_TRUE(found);
}

TEST_F(recorder_test, a_send_annotation_applies_to_the_next_send_only) {
  recorder r(dir_.string(), 0, 2, 0, "local PEs", "local", 16);
  r.note_send(1, send_cause::timer);
  r.sent(1, 7, 100, 10, 20);
  r.sent(1, 7, 50, 30, 40);
  const json doc = written(r);
  std::vector<json> sends;
  for (const json& e : doc["traceEvents"])
    if (e["ph"] == "X" && e["name"] == "send") sends.push_back(e["args"]);
  ASSERT_EQ(sends.size(), 2u);
  EXPECT_EQ(sends[0]["dim"], 1);
  EXPECT_EQ(sends[0]["cause"], "timer");
  EXPECT_EQ(sends[0]["bytes"], 100);
  EXPECT_FALSE(sends[1].contains("dim"));
  EXPECT_EQ(sends[1]["cause"], "other");
}

// The recorder is a leaf: it names no backend and decodes no channel. The process name and the
// backend are its caller's labels, and a receive finds its dimension by the endpoint it is told.
TEST_F(recorder_test, the_callers_labels_and_endpoint_are_written_as_told) {
  recorder r(dir_.string(), 5, 8, 2, "rank 2", "mpi", 16);
  r.dimension_at(4, 1);
  const std::byte payload[] = {std::byte{9}, std::byte{3}};
  r.received(1, 0x80000004u, 4, payload, sizeof payload, 100, 200, 0, 1);  // a control channel of endpoint 4
  r.received(1, 4, 6, payload, sizeof payload, 300, 400, 0, 1);             // endpoint 6 says nothing
  const json doc = written(r);
  EXPECT_EQ(doc["otherData"]["backend"], "mpi");
  std::vector<json> receives;
  bool named = false;
  for (const json& e : doc["traceEvents"]) {
    named |= e["ph"] == "M" && e["name"] == "process_name" && e["args"]["name"] == "rank 2" && e["pid"] == 2;
    if (e["ph"] == "X" && e["name"] == "recv") receives.push_back(e["args"]);
  }
  EXPECT_TRUE(named);
  ASSERT_EQ(receives.size(), 2u);
  EXPECT_EQ(receives[0]["channel"], 0x80000004u);
  EXPECT_EQ(receives[0]["dim"], 3);
  EXPECT_FALSE(receives[1].contains("dim"));
}

TEST(flow_ids, both_ends_agree_and_only_a_sample_gets_arrows) {
  for (std::uint64_t k = 0; k < 200; ++k) {
    const std::uint64_t id = flow_id(2, 5, 3, k);
    EXPECT_EQ(id, flow_id(2, 5, 3, k));
    EXPECT_EQ(id != 0, k < 16 || k % 64 == 0) << k;
    EXPECT_LT(id, std::uint64_t{1} << 53);
  }
  EXPECT_NE(flow_id(2, 5, 3, 0), flow_id(5, 2, 3, 0));  // the direction matters
  EXPECT_NE(flow_id(2, 5, 3, 0), flow_id(2, 5, 4, 0));  // and the channel
}

TEST_F(recorder_test, a_file_that_cannot_be_created_is_a_warning) {
  recorder r((dir_ / "gone").string(), 0, 1, 0, "local PEs", "local", 16);  // the directory does not exist
  r.instant(r.label("x"), 1);
  ::testing::internal::CaptureStderr();
  EXPECT_FALSE(r.write("end"));
  const std::string warning = ::testing::internal::GetCapturedStderr();
  EXPECT_NE(warning.find("warning: --transit-trace: "), std::string::npos) << warning;
  EXPECT_NE(warning.find("could not be created (No such file or directory)"), std::string::npos) << warning;
}

}  // namespace
}  // namespace transit::detail::trace
