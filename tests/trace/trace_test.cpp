// The timeline trace (--transit-trace, src/trace/): every PE's file parses as JSON and has the
// shape Perfetto reads (phases, pid/tid, timestamps in order per thread); its send events are the
// streamer's messages, one for one, and every flow arrow's end has its start in the sender's file;
// received messages name the grid dimension they came on, as their sends do; with a communication
// thread (hybrid mpi) its hand-offs are in a file of their own, one per message between ranks;
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
  const std::set<std::string> phases{"X", "i", "C", "M", "s", "f", "t"}, data{"full", "timer", "final", "bound"};
  // The streamer's data channels: every message received on one names the dimension it came on.
  std::set<std::uint64_t> data_channels;
  for (const json& e : field(doc, "traceEvents"))
    if (field(e, "name") == "send" && field(field(e, "args"), "cause").is_string() &&
        data.count(field(field(e, "args"), "cause").get<std::string>()) > 0)
      data_channels.insert(field(field(e, "args"), "channel").get<std::uint64_t>());
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
    if (ph == "s" || ph == "f" || ph == "t") {
      EXPECT_TRUE(field(e, "id").is_number_unsigned());
    }
    if (ph == "X" && field(e, "name") == "recv" &&
        data_channels.count(field(field(e, "args"), "channel").get<std::uint64_t>()) > 0) {
      EXPECT_TRUE(field(field(e, "args"), "dim").is_number_integer()) << "a data message received without its dimension";
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
              // the message alike. Its two ends name the same dimension (each arrow follows the
              // send or receive event it belongs to).
              std::set<std::uint64_t> starts, ends;
              std::map<std::uint64_t, json> sent_dim, received_dim;
              std::uint64_t remote_sends = 0;
              const int per_rank = ctx.options().threads_per_rank;
              for (int pe = 0; pe < ctx.size() && ctx.rank() == 0; ++pe) {
                const json other = read(dir + "/transit-trace-" + std::to_string(pe) + ".json");
                json last_dim;
                for (const json& e : field(other, "traceEvents")) {
                  if (field(e, "ph") == "X" && (field(e, "name") == "send" || field(e, "name") == "recv"))
                    last_dim = field(field(e, "args"), "dim");
                  if (field(e, "ph") == "X" && field(e, "name") == "send" && ctx.backend() == "mpi" &&
                      field(field(e, "args"), "to").get<int>() / per_rank != pe / per_rank)
                    ++remote_sends;
                  if (field(e, "ph") == "s") {
                    starts.insert(field(e, "id").get<std::uint64_t>());
                    sent_dim[field(e, "id").get<std::uint64_t>()] = last_dim;
                  }
                  if (field(e, "ph") == "f") {
                    ends.insert(field(e, "id").get<std::uint64_t>());
                    received_dim[field(e, "id").get<std::uint64_t>()] = last_dim;
                  }
                }
              }
              if (ctx.size() > 1 && ctx.rank() == 0) {
                EXPECT_FALSE(ends.empty());
              }
              std::size_t with_dim = 0;
              for (const std::uint64_t id : ends) {
                EXPECT_EQ(starts.count(id), 1u) << "flow " << id << " has no start";
                if (!sent_dim[id].is_null() && !received_dim[id].is_null()) ++with_dim;
                if (!received_dim[id].is_null()) {
                  EXPECT_EQ(received_dim[id], sent_dim[id]) << "flow " << id << ": received on another dimension";
                }
              }
              if (ctx.size() > 1 && ctx.rank() == 0) {
                EXPECT_GT(with_dim, 0u) << "no received message names its dimension";
              }
              // With a communication thread per rank (hybrid mpi, docs/hybrid.md) each rank's thread
              // writes its hand-offs: one to MPI per message for another rank, one to a PE per
              // arrival, each sampled message a step on its send's arrow.
              if (ctx.rank() == 0 && ctx.backend() == "mpi" && per_rank > 1 && runs_comm_thread(ctx.options())) {
                std::uint64_t to_mpi = 0, to_pe = 0;
                const int ranks = ctx.size() / per_rank;
                for (int rank = 0; rank < ranks; ++rank) {
                  const std::string comm = dir + "/transit-trace-comm-" + std::to_string(rank) + ".json";
                  const json doc_comm = read(comm);
                  EXPECT_EQ(field(field(doc_comm, "otherData"), "comm_thread_of_rank"), rank);
                  EXPECT_EQ(field(field(doc_comm, "otherData"), "events_dropped"), 0);
                  check_schema(doc_comm, comm, ctx.size() + rank, rank);
                  for (const json& e : field(doc_comm, "traceEvents")) {
                    to_mpi += field(e, "name") == "hand-off to MPI" ? 1 : 0;
                    to_pe += field(e, "name") == "hand-off to PE" ? 1 : 0;
                    if (field(e, "ph") == "t") {
                      EXPECT_EQ(starts.count(field(e, "id").get<std::uint64_t>()), 1u) << "a hand-off off every arrow";
                    }
                  }
                }
                EXPECT_EQ(to_mpi, remote_sends) << "every message for another rank is handed to MPI once";
                // A message that reaches a rank after its PEs have finished (the last notice of an
                // ended endpoint, which the transport drops at teardown) has no PE to go to: on a
                // loaded machine a few do, so arrivals are bounded by the sends, not equal to them.
                EXPECT_LE(to_pe, remote_sends) << "no arrival is handed to a PE twice";
                if (ranks > 1) {  // one rank (ThreadSanitizer's hybrid runs) has no other rank to send to
                  EXPECT_GT(to_pe, 0u);
                  EXPECT_GT(to_mpi, 0u);
                }
              }
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
