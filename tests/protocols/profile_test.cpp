// Protocol profiles: lookup at (2^floor(log2 S), 2^floor(log2 N)), intra- and inter-node tables,
// the built-in rule, smoothing over neighbouring points, the file's "protocols" section (other
// sections kept), files that cannot be used (each error names the file and the problem), and the
// interleaved timing the calibration runs on.
#include <gtest/gtest.h>

#include <cstdint>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <optional>
#include <string>
#include <vector>

#include "test_support.hpp"
#include "transit/protocols/calibrate_protocols.hpp"
#include "transit/transit.hpp"
#include "transit/profile/profile.hpp"

namespace {

using namespace transit;
namespace fs = std::filesystem;

std::filesystem::path scratch(const std::string& name) { return transit::testing::scratch_file(name); }

void write(const fs::path& path, const std::string& text) {
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out << text;
}

protocol_profile sample(const std::string& backend, int ppn) {
  protocol_profile p;
  p.backend = backend;
  p.pes_per_node = ppn;
  p.host = protocol_profile_host();
  p.pes = 8;
  p.created = "2026-11-22T00:00:00Z";
  p.intra.measured = true;
  p.inter.measured = true;
  for (std::size_t s = 8; s <= 1024; s *= 2)
    for (std::size_t n = 1; n <= 64; n *= 2) {
      // intra: packed wins below 128 B, blocking for one region, pipelined otherwise;
      // inter: pipelined everywhere.
      protocol_point point{s, n, 3.0, 2.0, 1.0};
      if (s >= 128) point.packed = 4.0;
      if (n == 1) point.blocking = 0.5;
      p.intra.points.push_back(point);
      p.inter.points.push_back(protocol_point{s, n, 3.0, 1.0, 2.0});
    }
  return p;
}

TEST(protocol_profile, lookup_floors_to_powers_of_two_and_clamps) {
  const protocol_profile p = sample("local", 4);
  EXPECT_EQ(p.choose(100, 5, true), transfer_protocol::packed);      // (64, 4)
  EXPECT_EQ(p.choose(127, 1000, true), transfer_protocol::packed);   // (64, 512) -> nearest (64, 64)
  EXPECT_EQ(p.choose(128, 2, true), transfer_protocol::pipelined);   // (128, 2)
  EXPECT_EQ(p.choose(5000, 1, true), transfer_protocol::blocking);   // (4096, 1) -> (1024, 1)
  EXPECT_EQ(p.choose(1, 3, true), transfer_protocol::packed);        // (1, 2) -> (8, 2)
  EXPECT_EQ(p.choose(100, 5, false), transfer_protocol::pipelined);  // the inter-node table
  protocol_profile intra_only = p;
  intra_only.inter = {};
  EXPECT_EQ(intra_only.choose(100, 5, false), transfer_protocol::packed);  // falls back to intra
  const protocol_profile none;
  EXPECT_EQ(none.choose(64, 16, true), builtin_protocol_choice(64, 16));
  EXPECT_EQ(builtin_protocol_choice(64, 16), transfer_protocol::packed);
  EXPECT_EQ(builtin_protocol_choice(64, 1), transfer_protocol::pipelined);
  EXPECT_EQ(builtin_protocol_choice(4096, 16), transfer_protocol::pipelined);
}

/// A grid S = 8..4096, N = 1..256 where `at(s, n)` gives each point's times.
template <typename Times>
protocol_table grid(Times at) {
  protocol_table t;
  t.measured = true;
  for (std::size_t s = 8; s <= 4096; s *= 2)
    for (std::size_t n = 1; n <= 256; n *= 2) t.points.push_back(at(s, n));
  return t;
}

const protocol_point& point_at(const protocol_table& t, std::size_t s, std::size_t n) {
  const protocol_point* p = t.lookup(s, n);
  EXPECT_TRUE(p != nullptr && p->region_bytes == s && p->regions == n);
  return *p;
}

// One point where pipelined beats packed by 2%, inside a region where packed wins by 10%: the
// neighbours outvote it (noise), and automatic takes packed there too.
TEST(protocol_smoothing, a_close_point_follows_its_neighbours) {
  const protocol_table t = grid([](std::size_t s, std::size_t n) {
    if (s == 64 && n == 16) return protocol_point{s, n, 5.0, 1.0, 1.02};
    return protocol_point{s, n, 5.0, 1.1, 1.0};
  });
  const protocol_point& odd = point_at(t, 64, 16);
  EXPECT_EQ(odd.fastest(), transfer_protocol::pipelined);
  EXPECT_EQ(t.smoothed_fastest(odd), transfer_protocol::packed);
  for (const auto& p : t.points) EXPECT_EQ(t.smoothed_fastest(p), transfer_protocol::packed) << p.region_bytes << " " << p.regions;
  protocol_profile profile;
  profile.intra = t;
  EXPECT_EQ(profile.choose(64, 16, true), transfer_protocol::packed);
  EXPECT_EQ(profile.choose(100, 20, true), transfer_protocol::packed);  // looked up at (64, 16)
}

// A point whose own winner leads by 50% keeps it against four neighbours that lean 5% the other
// way: smoothing decides where the point itself is close. Its neighbours may follow it (it counts
// there as one of five votes); points two steps away do not.
TEST(protocol_smoothing, a_clear_winner_keeps_its_point) {
  const protocol_table t = grid([](std::size_t s, std::size_t n) {
    if (s == 256 && n == 8) return protocol_point{s, n, 5.0, 1.5, 1.0};
    return protocol_point{s, n, 5.0, 1.0, 1.05};
  });
  EXPECT_EQ(t.smoothed_fastest(point_at(t, 256, 8)), transfer_protocol::packed);
  EXPECT_EQ(t.smoothed_fastest(point_at(t, 1024, 8)), transfer_protocol::pipelined);
  EXPECT_EQ(t.smoothed_fastest(point_at(t, 256, 32)), transfer_protocol::pipelined);
  EXPECT_EQ(t.smoothed_fastest(point_at(t, 512, 16)), transfer_protocol::pipelined);
}

// One neighbour's burst (packed's median 8 times its usual, as a loaded machine gives) counts as
// that neighbour preferring pipelined by the cap (1.5x), no more: the points around it, where
// packed leads by 30% themselves and at their other neighbours, keep packed. Uncapped, the one
// burst outvoted the four other points' leads (a miss seen in a loaded sweep, S = 4 KiB, N = 16).
TEST(protocol_smoothing, one_neighbours_burst_does_not_outvote_a_clear_lead) {
  const protocol_table t = grid([](std::size_t s, std::size_t n) {
    if (s == 128 && n == 16) return protocol_point{s, n, 5.0, 1.3, 8.0};
    return protocol_point{s, n, 5.0, 1.3, 1.0};
  });
  EXPECT_EQ(point_at(t, 128, 16).fastest(), transfer_protocol::pipelined);
  for (const auto& [s, n] : {std::pair<std::size_t, std::size_t>{64, 16}, {256, 16}, {128, 8}, {128, 32}})
    EXPECT_EQ(t.smoothed_fastest(point_at(t, s, n)), transfer_protocol::packed) << s << " " << n;
}

// A boundary of the cost structure (packed by 20% up to 256 B, pipelined by 20% above, blocking
// for one region) stays where it is: at the edge the point and its own-side neighbour outweigh
// the other side.
TEST(protocol_smoothing, structure_boundaries_stay_in_place) {
  const protocol_table t = grid([](std::size_t s, std::size_t n) {
    protocol_point p{s, n, 5.0, 1.0, 1.0};
    (s <= 256 ? p.pipelined : p.packed) = 1.2;
    if (n == 1) p.blocking = 0.5;
    return p;
  });
  for (const auto& p : t.points) EXPECT_EQ(t.smoothed_fastest(p), p.fastest()) << p.region_bytes << " " << p.regions;
}

// Points with a time of 0 take no part in the neighbourhood; such a point decides alone.
TEST(protocol_smoothing, zero_times_take_no_part) {
  protocol_table t = grid([](std::size_t s, std::size_t n) { return protocol_point{s, n, 5.0, 1.1, 1.0}; });
  for (auto& p : t.points)
    if (p.region_bytes == 64 && p.regions != 16) p = protocol_point{p.region_bytes, p.regions, 0.0, 0.0, 0.0};
  for (auto& p : t.points)
    if (p.region_bytes == 32 && p.regions == 16) p.packed = 0.0;  // unusable too
  // (64, 16) has one usable neighbour left, (128, 16), leaning 10% to packed: a 10% pipelined lead at the point, counted twice, wins (with all four neighbours it would not).
  for (auto& p : t.points)
    if (p.region_bytes == 64 && p.regions == 16) p.pipelined = 0.90;
  EXPECT_EQ(t.smoothed_fastest(point_at(t, 64, 16)), transfer_protocol::pipelined);
  for (auto& p : t.points)
    if (p.region_bytes == 64 && p.regions == 16) p.pipelined = 0.95, p.packed = 0.0;
  EXPECT_EQ(t.smoothed_fastest(point_at(t, 64, 16)), transfer_protocol::packed);  // its own zero: fastest() alone
  EXPECT_EQ(point_at(t, 64, 16).fastest(), transfer_protocol::packed);
}

TEST(protocol_profile, saved_entries_load_back_and_other_sections_stay) {
  const fs::path path = scratch("roundtrip.json");
  write(path, R"({"format": "transit profile", "version": 1, "streamer": [{"backend": "mpi", "kept": 42}]})");
  save_protocol_profile(path, sample("local", 4));
  save_protocol_profile(path, sample("local", 2));
  save_protocol_profile(path, sample("local", 4));  // replaces, does not add
  const auto four = load_protocol_profile(path, "local", 4, protocol_profile_host());
  ASSERT_TRUE(four.has_value());
  EXPECT_EQ(four->pes_per_node, 4);
  EXPECT_EQ(four->intra.points.size(), sample("local", 4).intra.points.size());
  EXPECT_EQ(four->choose(100, 5, true), transfer_protocol::packed);
  const auto three = load_protocol_profile(path, "local", 3, protocol_profile_host());  // closest, smaller on ties
  ASSERT_TRUE(three.has_value());
  EXPECT_EQ(three->pes_per_node, 2);
  EXPECT_FALSE(load_protocol_profile(path, "mpi", 4, protocol_profile_host()).has_value());
  EXPECT_FALSE(load_protocol_profile(path, "local", 4, "another-host").has_value());
  EXPECT_FALSE(load_protocol_profile(scratch("absent.json"), "local", 4, "h").has_value());
  std::ifstream in(path);
  const std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  EXPECT_NE(text.find("\"kept\": 42"), std::string::npos) << text;
  std::size_t entries = 0;
  for (std::size_t at = text.find("\"pes_per_node\""); at != std::string::npos; at = text.find("\"pes_per_node\"", at + 1))
    ++entries;
  EXPECT_EQ(entries, 2u);
}

/// Sets (or with nullptr unsets) an environment variable for one scope, then puts it back.
class scoped_env {
 public:
  scoped_env(const char* name, const char* value) : name_(name) {
    if (const char* old = std::getenv(name)) old_ = old;
    if (value != nullptr) ::setenv(name, value, 1);
    else ::unsetenv(name);
  }
  ~scoped_env() {
    if (old_) ::setenv(name_, old_->c_str(), 1);
    else ::unsetenv(name_);
  }
  scoped_env(const scoped_env&) = delete;
  scoped_env& operator=(const scoped_env&) = delete;

 private:
  const char* name_;
  std::optional<std::string> old_;
};

// The file has one owner: protocols and tuning resolve the same path and key entries by the same
// host. A relative XDG_CACHE_HOME is invalid (XDG Base Directory spec) and ignored by both.
TEST(protocol_profile, same_file_and_host_as_the_tuning_profile) {
  const scoped_env profile("TRANSIT_PROFILE", nullptr);
  const scoped_env home("HOME", "/home/me");
  {
    const scoped_env cache("XDG_CACHE_HOME", "relative/cache");
    EXPECT_EQ(protocol_profile_path(), fs::path("/home/me/.cache/transit/profile.json"));
    EXPECT_EQ(protocol_profile_path(), default_profile_path());
  }
  {
    const scoped_env cache("XDG_CACHE_HOME", "/var/cache/me");
    EXPECT_EQ(protocol_profile_path(), fs::path("/var/cache/me/transit/profile.json"));
    EXPECT_EQ(protocol_profile_path(), default_profile_path());
  }
  EXPECT_EQ(protocol_profile_host(), this_host());
  EXPECT_FALSE(protocol_profile_host().empty());
}

void expect_error(const std::string& content, const std::string& name, const std::string& problem) {
  const fs::path path = scratch(name);
  write(path, content);
  try {
    (void)load_protocol_profile(path, "local", 4, protocol_profile_host());
    ADD_FAILURE() << name << " was accepted";
  } catch (const protocol_profile_error& e) {
    const std::string what = e.what();
    EXPECT_NE(what.find(path.string()), std::string::npos) << what;
    EXPECT_NE(what.find(problem), std::string::npos) << "expected '" << problem << "' in: " << what;
  }
}

TEST(protocol_profile, malformed_and_truncated_files_name_the_file_and_the_problem) {
  const fs::path good = scratch("good.json");
  save_protocol_profile(good, sample("local", 4));
  std::ifstream in(good);
  const std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  expect_error(text.substr(0, text.size() / 2), "truncated.json", "truncated");
  expect_error("", "empty.json", "truncated");
  expect_error("protocols = []", "not-json.json", "not JSON");
  expect_error("[1, 2]", "array.json", "expected a JSON object at the top");
  expect_error(R"({"format": "something else"})", "format.json", "format: got \"something else\"");
  expect_error(R"({"version": 99})", "newer.json", "version 99 was written by a newer transit");
  expect_error(R"({"protocols": {}})", "section.json", "protocols: expected an array");
  const std::string host = protocol_profile_host();
  const std::string head = R"({"protocols": [{"backend": "local", "host": ")" + host + R"(", "pes_per_node": 4, )";
  expect_error(head + R"("pes": 8, "created": "x", "inter": {"measured": false, "points": []}}]})", "no-intra.json",
               "protocols[0].intra: missing");
  expect_error(head + R"("pes": 8, "created": "x", "intra": {"measured": true, "points": [{"region_bytes": 8,
               "regions": 1, "seconds": {"blocking": 1, "pipelined": "fast", "packed": 1}}]},
               "inter": {"measured": false, "points": []}}]})",
               "bad-time.json", "protocols[0].intra.points[0].seconds.pipelined: got \"fast\"");
  expect_error(head + R"("pes": 8, "created": "x", "intra": {"measured": true, "points": [{"region_bytes": -8,
               "regions": 1, "seconds": {"blocking": 1, "pipelined": 1, "packed": 1}}]},
               "inter": {"measured": false, "points": []}}]})",
               "bad-size.json", "protocols[0].intra.points[0].region_bytes: got -8, expected a positive integer");
  expect_error(R"({"protocols": [{"backend": "local", "host": ")" + host + R"(", "pes_per_node": "four"}]})",
               "bad-ppn.json", "protocols[0].pes_per_node: got \"four\"");
}

// The interleaved timing behind the calibration and `bench vector --sweep`: one timing per
// protocol in the order given, each verified by its own put and get, automatic's choice recorded;
// a PE without a target only joins the collective steps. A small calibration fills both tables.
TEST(protocol_calibration, interleaved_timing_and_a_small_calibration) {
  ::setenv("TRANSIT_PROFILE", scratch("none.json").c_str(), 1);  // no file: the built-in rule, whatever the machine has
  EXPECT_EQ(transit::testing::run_spmd(
                [](context& ctx) {
                  const bool same_node = false;
                  const int target = ctx.rank() == 1 ? -1 : vector_partner(ctx, ctx.rank(), same_node);
                  const vector_slots slots = vector_slot(ctx, ctx.rank(), same_node);
                  global_array<std::uint8_t> a(ctx, vector_block_bytes(24, 5, slots.slots) * static_cast<std::size_t>(ctx.size()));
                  const std::vector<transfer_protocol> order = {transfer_protocol::packed, transfer_protocol::automatic,
                                                                transfer_protocol::blocking, transfer_protocol::pipelined};
                  const auto t = time_vector_protocols(
                      ctx, a, vector_point{24, 5, 3, transfer_protocol::automatic, target, slots.slot}, order);
                  ASSERT_EQ(t.size(), order.size());
                  for (std::size_t i = 0; i < t.size(); ++i) {
                    EXPECT_TRUE(t[i].verified) << to_string(order[i]);
                    EXPECT_GT(t[i].seconds, 0.0) << to_string(order[i]);  // the slowest PE's transfer, never skipped
                  }
                  if (target >= 0) {
                    EXPECT_EQ(t[1].chosen, a.chosen_protocol(24, 5, target));
                  }

                  protocol_calibration_options o;
                  o.max_region_bytes = 16;
                  o.max_regions = 2;
                  o.iterations = 2;
                  const protocol_profile p = calibrate_protocols(ctx, o);
                  for (const auto* table : {&p.intra, &p.inter}) {
                    EXPECT_TRUE(table->measured);
                    ASSERT_EQ(table->points.size(), 4u);  // S = 8, 16 by N = 1, 2
                    for (const auto& point : table->points)
                      EXPECT_TRUE(point.blocking > 0 && point.pipelined > 0 && point.packed > 0)
                          << point.region_bytes << " " << point.regions;
                  }
                },
                {"--transit-pes-per-node=2"}),
            0);
  ::unsetenv("TRANSIT_PROFILE");
}

// automatic reads TRANSIT_PROFILE: a file whose intra-node table says blocking everywhere makes
// chosen_protocol blocking for PEs of this node; a broken file makes automatic transfers throw.
TEST(protocol_profile, automatic_uses_the_file_and_refuses_a_broken_one) {
  const fs::path path = scratch("automatic.json");
  protocol_profile p = sample("local", 2);
  for (auto& point : p.intra.points) point = protocol_point{point.region_bytes, point.regions, 0.1, 1, 1};
  save_protocol_profile(path, p);
  ::setenv("TRANSIT_PROFILE", path.c_str(), 1);
  EXPECT_EQ(transit::testing::run_spmd(
                [](context& ctx) {
                  const auto status = protocol_profile_in_use(ctx);
                  EXPECT_TRUE(status.from_file) << status.description;
                  global_array<int> a(ctx, 4 * static_cast<std::size_t>(ctx.size()));
                  for (int target = 0; target < ctx.size(); ++target) {
                    const bool same = ctx.machine().node_of(target) == ctx.machine().node_of(ctx.rank());
                    const auto chosen = a.chosen_protocol(100, 5, target);
                    EXPECT_EQ(chosen, same ? transfer_protocol::blocking : transfer_protocol::pipelined) << target;
                  }
                },
                {"--transit-pes-per-node=2"}),
            0);
  const fs::path broken = scratch("broken.json");
  write(broken, R"({"protocols": [)");
  ::setenv("TRANSIT_PROFILE", broken.c_str(), 1);
  EXPECT_EQ(transit::testing::run_spmd([&](context& ctx) {
              const auto status = protocol_profile_in_use(ctx);
              EXPECT_NE(status.error.find(broken.string()), std::string::npos) << status.error;
              global_array<int> a(ctx, 8);
              const std::vector<region> one = {{0, 1}};
              const std::vector<int> v = {1};
              try {
                a.put_regions(one, v);
                ADD_FAILURE() << "automatic used a broken profile";
              } catch (const protocol_profile_error& e) {
                EXPECT_NE(std::string(e.what()).find("truncated"), std::string::npos) << e.what();
              }
              a.put_regions(one, v, transfer_protocol::packed);  // a fixed protocol needs no profile
              a.sync();
            }),
            0);
  ::unsetenv("TRANSIT_PROFILE");
}

}  // namespace
