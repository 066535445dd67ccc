// The timeline trace (--transit-trace, src/trace/): every PE's file parses as JSON and has the
// shape Perfetto reads (phases, pid/tid, timestamps in order per thread); its send events are the
// streamer's messages, one for one, and every flow arrow's end has its start in the sender's file;
// a ring too small drops the oldest events and says so in the file.
#include <gtest/gtest.h>
#include <stdlib.h>

#include <array>
#include <cstdint>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <map>
#include <mutex>
#include <random>
#include <set>
#include <string>

#include <nlohmann/json.hpp>

#include "test_support.hpp"

namespace transit {
namespace {

using nlohmann::json;

std::mutex guard;  // the local backend's PEs are threads of this process

// A fresh directory, the same on every PE: PE 0 makes it and broadcasts its name.
std::string shared_directory() {
  std::string name;
  EXPECT_EQ(testing::run_spmd([&](context& ctx) {
              std::array<char, 200> path{};
              if (ctx.rank() == 0) {
                std::string pattern = (std::filesystem::temp_directory_path() / "transit-trace-test-XXXXXX").string();
                ASSERT_NE(::mkdtemp(pattern.data()), nullptr);
                ASSERT_LT(pattern.size(), path.size());
                std::memcpy(path.data(), pattern.data(), pattern.size());
              }
              path = ctx.broadcast(path, 0);
              std::lock_guard lock(guard);
              name = path.data();
            }),
            0);
  return name;
}

// A histogram-like run: two steps of random inserts, one ended by finish (staged completion), one
// by quiesce (termination waves). Returns each PE's messages sent, by PE.
std::map<int, std::uint64_t> traced_run(const std::string& dir, const char* events_option) {
  std::map<int, std::uint64_t> sent;
  const std::string trace = "--transit-trace=" + dir;
  EXPECT_EQ(testing::run_spmd(
                [&](context& ctx) {
                  std::uint64_t sum = 0;
                  streamer_options options;
                  options.buffer_items = 64;
                  streamer<std::uint64_t> s(ctx, options, [&](const std::uint64_t& v) { sum += v; });
                  std::mt19937_64 rng(static_cast<std::uint64_t>(ctx.rank()) + 1);
                  for (int step = 0; step < 2; ++step) {
                    const auto pes = static_cast<unsigned>(ctx.size());
                    for (int i = 0; i < 5000; ++i) s.insert(1, static_cast<int>(rng() % pes));
                    if (step == 0) {
                      s.finish();
                    } else {
                      s.quiesce();
                    }
                  }
                  EXPECT_EQ(ctx.allreduce(sum, reduce_op::sum), 10000u * static_cast<std::uint64_t>(ctx.size()));
                  std::lock_guard lock(guard);
                  sent[ctx.rank()] = s.stats().messages_sent;
                },
                {trace.c_str(), events_option}),
            0);
  return sent;
}

// A member of `e`, or null when it has none: a missing field fails the checks, never the test program.
const json& field(const json& e, const char* key) {
  static const json none;
  if (!e.is_object()) return none;
  const auto it = e.find(key);
  return it == e.end() ? none : *it;
}

json read(const std::string& file) {
  std::ifstream in(file);
  EXPECT_TRUE(in.good()) << file << " was not written";
  json doc = json::parse(in, nullptr, false);
  EXPECT_FALSE(doc.is_discarded()) << file << " is not valid JSON";
  return doc;
}

// What Perfetto's JSON importer needs of each event, and timestamps that never go back per thread.
// Returns the number of the streamer's data messages among the send events.
std::uint64_t check_schema(const json& doc, const std::string& file, int pe, int pid) {
  EXPECT_TRUE(doc.is_object() && doc.contains("traceEvents") && field(doc, "traceEvents").is_array()) << file;
  std::map<std::pair<int, int>, double> last_ts;
  std::uint64_t data_sends = 0;
  const std::set<std::string> phases{"X", "i", "C", "M", "s", "f"}, data{"full", "timer", "final", "bound"};
  for (const json& e : field(doc, "traceEvents")) {
    SCOPED_TRACE(file + ": " + e.dump());
    EXPECT_TRUE(e.is_object());
    EXPECT_TRUE(field(e, "name").is_string());
    const std::string ph = field(e, "ph").get<std::string>();
    EXPECT_EQ(phases.count(ph), 1u);
    EXPECT_TRUE(field(e, "pid").is_number_integer() && field(e, "tid").is_number_integer());
    EXPECT_EQ(field(e, "pid").get<int>(), pid);
    EXPECT_EQ(field(e, "tid").get<int>(), pe);
    if (ph == "M") {
      EXPECT_TRUE(field(e, "args").is_object());
      continue;
    }
    EXPECT_TRUE(field(e, "ts").is_number());
    const double ts = field(e, "ts").get<double>();
    const auto thread = std::make_pair(field(e, "pid").get<int>(), field(e, "tid").get<int>());
    if (last_ts.count(thread) > 0) {
      EXPECT_GE(ts, last_ts[thread]);
    }
    last_ts[thread] = ts;
    if (ph == "X") {
      EXPECT_TRUE(field(e, "dur").is_number() && field(e, "dur").get<double>() >= 0);
    }
    if (ph == "i") {
      EXPECT_EQ(field(e, "s"), "t");
    }
    if (ph == "s" || ph == "f") {
      EXPECT_TRUE(field(e, "id").is_number_unsigned());
    }
    if (ph == "f") {
      EXPECT_EQ(field(e, "bp"), "e");
    }
    if (ph == "C") {
      EXPECT_TRUE(field(e, "args").is_object());
    }
    if (ph == "X" && field(e, "name") == "send") {
      EXPECT_TRUE(field(field(e, "args"), "bytes").is_number_unsigned());
      EXPECT_TRUE(field(field(e, "args"), "to").is_number_integer());
      if (data.count(field(field(e, "args"), "cause").get<std::string>()) > 0) {
        ++data_sends;
        EXPECT_TRUE(field(field(e, "args"), "dim").is_number_integer());  // every data message names its dimension
      }
    }
  }
  return data_sends;
}

int pid_of(const context& ctx) {
  return ctx.backend() == "local" ? 0 : ctx.rank() / ctx.options().threads_per_rank;
}

TEST(trace, files_follow_the_schema_and_count_every_message) {
  const std::string dir = shared_directory();
  const auto sent = traced_run(dir, "--transit-trace-events=100000");
  EXPECT_EQ(testing::run_spmd([&](context& ctx) {
              ctx.barrier();  // every PE's file is written (its context of the traced run ended)
              const std::string file = dir + "/transit-trace-" + std::to_string(ctx.rank()) + ".json";
              const json doc = read(file);
              EXPECT_EQ(field(field(doc, "otherData"), "events_dropped"), 0);
              EXPECT_EQ(field(field(doc, "otherData"), "written_at"), "end");
              EXPECT_EQ(field(field(doc, "otherData"), "pes"), ctx.size());
              std::uint64_t mine = 0;
              {
                std::lock_guard lock(guard);
                mine = sent.at(ctx.rank());
              }
              EXPECT_EQ(check_schema(doc, file, ctx.rank(), pid_of(ctx)), mine);
              bool step = false, wave = false, wait = false;
              for (const json& e : field(doc, "traceEvents")) {
                const std::string name = field(e, "name");
                step |= field(e, "ph") == "X" && name.find("> #") != std::string::npos && name.ends_with(" step");
                wave |= field(e, "ph") == "i" && name == "termination wave";
                wait |= field(e, "ph") == "X" && name == "streamer wait (final barrier)";
              }
              EXPECT_TRUE(step && wave && wait) << "steps, waves and waits are on the timeline";
              // Every arrow that ends somewhere started in its sender's file: both sides numbered
              // the message alike.
              std::set<std::uint64_t> starts, ends;
              for (int pe = 0; pe < ctx.size() && ctx.rank() == 0; ++pe) {
                const json other = read(dir + "/transit-trace-" + std::to_string(pe) + ".json");
                for (const json& e : field(other, "traceEvents")) {
                  if (field(e, "ph") == "s") starts.insert(field(e, "id").get<std::uint64_t>());
                  if (field(e, "ph") == "f") ends.insert(field(e, "id").get<std::uint64_t>());
                }
              }
              if (ctx.size() > 1 && ctx.rank() == 0) {
                EXPECT_FALSE(ends.empty());
              }
              for (const std::uint64_t id : ends) EXPECT_EQ(starts.count(id), 1u) << "flow " << id << " has no start";
              ctx.barrier();  // PE 0 has read every file before any process removes them
            }),
            0);
  std::error_code ignored;  // every process of an MPI launch removes it: all but one find it gone
  std::filesystem::remove_all(dir, ignored);
}

TEST(trace, a_full_ring_drops_the_oldest_and_says_so) {
  const std::string dir = shared_directory();
  const auto sent = traced_run(dir, "--transit-trace-events=8");
  EXPECT_EQ(testing::run_spmd([&](context& ctx) {
              ctx.barrier();
              const std::string file = dir + "/transit-trace-" + std::to_string(ctx.rank()) + ".json";
              const json doc = read(file);
              EXPECT_GT(field(field(doc, "otherData"), "events_dropped").get<std::uint64_t>(), 0u);
              bool said = false;
              for (const json& e : field(doc, "traceEvents"))
                said |= field(e, "ph") == "M" && field(e, "name") == "transit_dropped" &&
                        field(field(e, "args"), "dropped").get<std::uint64_t>() > 0;
              EXPECT_TRUE(said);
              std::uint64_t mine = 0;
              {
                std::lock_guard lock(guard);
                mine = sent.at(ctx.rank());
              }
              EXPECT_LE(check_schema(doc, file, ctx.rank(), pid_of(ctx)), mine);
              ctx.barrier();  // every PE has read its file before any process removes them
            }),
            0);
  std::error_code ignored;  // every process of an MPI launch removes it: all but one find it gone
  std::filesystem::remove_all(dir, ignored);
}

}  // namespace
}  // namespace transit
