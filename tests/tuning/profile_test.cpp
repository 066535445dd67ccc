// The profile file: entries written and read back field for field, other sections kept, lookups
// by key and by the closest PEs per node, and a damaged file reported by name with what is wrong
// (never a crash, never silently ignored).
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <string>

#include "profile/profile_json.hpp"
#include "test_support.hpp"
#include "transit/tuning/calibrate_streamer.hpp"
#include "transit/profile/profile.hpp"

namespace {

using namespace transit;

std::filesystem::path scratch(const std::string& name) { return transit::testing::scratch_file(name); }

void write(const std::filesystem::path& path, const std::string& text) {
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out << text;
}

streamer_profile sample(int pes_per_node, const std::string& host) {
  streamer_profile p;
  p.backend = "local";
  p.pes_per_node = pes_per_node;
  p.host = host;
  p.pes = 8;
  p.hardware_threads = 2;
  p.created = "2026-11-22T12:00:00Z";
  p.intra = {true, 0, 1, {1.5e-6, 2.5e-10, 1.1e-8}, {{16, 1e-6, 16e6}, {1024, 1.2e-6, 853e6}, {65536, 2e-5, 3.2e9}},
             {{0, 2e-7, 0}, {8, 2.5e-7, 32e6}}};
  p.inter.measured = false;
  derive_buffer_sizes(p);
  return p;
}

/// Expects `load` of a file holding `text` to throw profile_error naming the file and `problem`.
void expect_named_error(const std::string& text, const std::string& problem) {
  const auto path = scratch("damaged.json");
  write(path, text);
  try {
    profile_file::load(path);
    FAIL() << "no error for a profile holding: " << text;
  } catch (const profile_error& e) {
    const std::string what = e.what();
    EXPECT_NE(what.find(path.string()), std::string::npos) << what;
    EXPECT_NE(what.find(problem), std::string::npos) << "expected '" << problem << "' in: " << what;
  }
}

TEST(tuning_profile, written_entries_read_back_field_for_field) {
  const auto path = scratch("profile.json");
  std::filesystem::remove(path);
  profile_file file = profile_file::load(path);  // missing: empty
  EXPECT_FALSE(file.exists());
  const streamer_profile a = sample(4, "alpha"), b = sample(2, "alpha");
  file.put(a);
  file.put(b);
  transport_profile t;
  t.backend = "mpi";
  t.pes_per_node = 2;
  t.host = "alpha";
  t.single_copy_bandwidth = {{"default", 1e9}, {"none", 3e9}};
  t.single_copy_choice = "none";
  file.put(t);
  file.save();

  const profile_file back = profile_file::load(path);
  EXPECT_TRUE(back.exists());
  const auto got = back.find_streamer("local", 4, "alpha");
  ASSERT_TRUE(got.has_value());
  EXPECT_EQ(got->pes, a.pes);
  EXPECT_EQ(got->created, a.created);
  EXPECT_TRUE(got->intra.measured);
  EXPECT_FALSE(got->inter.measured);
  EXPECT_DOUBLE_EQ(got->intra.costs.alpha, a.intra.costs.alpha);
  EXPECT_DOUBLE_EQ(got->intra.costs.beta, a.intra.costs.beta);
  EXPECT_DOUBLE_EQ(got->intra.costs.per_item, a.intra.costs.per_item);
  ASSERT_EQ(got->intra.curve.size(), a.intra.curve.size());
  for (std::size_t i = 0; i < a.intra.curve.size(); ++i) {
    EXPECT_EQ(got->intra.curve[i].message_bytes, a.intra.curve[i].message_bytes);
    EXPECT_DOUBLE_EQ(got->intra.curve[i].bytes_per_second, a.intra.curve[i].bytes_per_second);
  }
  ASSERT_EQ(got->intra.raw_curve.size(), a.intra.raw_curve.size());
  for (std::size_t i = 0; i < a.intra.raw_curve.size(); ++i) {
    EXPECT_EQ(got->intra.raw_curve[i].message_bytes, a.intra.raw_curve[i].message_bytes);
    EXPECT_DOUBLE_EQ(got->intra.raw_curve[i].seconds_per_message, a.intra.raw_curve[i].seconds_per_message);
  }
  EXPECT_TRUE(got->inter.raw_curve.empty());
  EXPECT_EQ(got->buffer_bytes_75, a.buffer_bytes_75);
  EXPECT_EQ(got->buffer_bytes_75, 65536u);  // the only point above 75% of the peak
  EXPECT_EQ(got->buffer_bytes_50, 65536u);
  const auto transport = back.find_transport("mpi", "alpha");
  ASSERT_TRUE(transport.has_value());
  EXPECT_EQ(transport->single_copy_choice, "none");
  EXPECT_DOUBLE_EQ(transport->single_copy_bandwidth.at("default"), 1e9);
  EXPECT_FALSE(back.find_streamer("local", 4, "beta").has_value());
  EXPECT_FALSE(back.find_streamer("mpi", 4, "alpha").has_value());

  // Replacing an entry keeps one per key.
  profile_file again = back;
  streamer_profile newer = a;
  newer.created = "2026-11-23T00:00:00Z";
  again.put(newer);
  again.save();
  const auto entries = profile_file::load(path).streamer_entries();
  EXPECT_EQ(entries.size(), 2u);
  EXPECT_EQ(profile_file::load(path).find_streamer("local", 4, "alpha")->created, newer.created);
}

TEST(tuning_profile, closest_entry_by_pes_per_node) {
  const auto path = scratch("closest.json");
  std::filesystem::remove(path);
  profile_file file = profile_file::load(path);
  file.put(sample(2, "h"));
  file.put(sample(8, "h"));
  bool exact = true;
  EXPECT_EQ(file.closest_streamer("local", 4, "h", exact)->pes_per_node, 2);  // equally far: the smaller
  EXPECT_FALSE(exact);
  EXPECT_EQ(file.closest_streamer("local", 7, "h", exact)->pes_per_node, 8);
  EXPECT_EQ(file.closest_streamer("local", 8, "h", exact)->pes_per_node, 8);
  EXPECT_TRUE(exact);
  EXPECT_FALSE(file.closest_streamer("local", 8, "other-host", exact).has_value());
}

TEST(tuning_profile, sections_of_other_kinds_are_kept) {
  const auto path = scratch("kept.json");
  write(path, R"({"format": "transit profile", "version": 1,
                  "protocols": [{"backend": "mpi", "pes_per_node": 2, "host": "h", "table": [1, 2, 3]}],
                  "future_field": {"x": 1}})");
  profile_file file = profile_file::load(path);
  file.put(sample(4, "h"));
  file.save();
  const profile_file back = profile_file::load(path);
  const auto* protocols = detail::profile_access::find_section(back, "protocols");
  ASSERT_NE(protocols, nullptr);
  EXPECT_EQ((*protocols)[0]["table"].size(), 3u);
  EXPECT_TRUE(back.find_streamer("local", 4, "h").has_value());
}

TEST(tuning_profile, damaged_files_are_named_with_the_problem) {
  const profile_file good = [] {
    profile_file f = profile_file::empty(scratch("good.json"));
    f.put(sample(4, "h"));
    f.save();
    return f;
  }();
  std::ifstream in(good.path());
  const std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  ASSERT_GT(text.size(), 100u);

  expect_named_error(text.substr(0, text.size() / 2), "truncated JSON");
  expect_named_error("", "is empty");
  expect_named_error("   \n", "is empty");
  expect_named_error("this is not json", "not valid JSON");
  expect_named_error("[1, 2, 3]", "expected an object");
  expect_named_error(R"({"format": "something else", "version": 1})", "format: got 'something else'");
  expect_named_error(R"({"format": "transit profile", "version": 99})", "newer transit");
  expect_named_error(R"({"format": "transit profile"})", "profile.version: missing");
  expect_named_error(R"({"format": "transit profile", "version": 1, "streamer": {}})", "streamer: expected an array");
  std::string mistyped = text;
  const auto at = mistyped.find("\"alpha_seconds\"");
  ASSERT_NE(at, std::string::npos);
  mistyped.replace(mistyped.find(':', at) + 1, 0, " \"fast\", \"was\":");
  expect_named_error(mistyped, "streamer[0].links.inter.alpha_seconds: expected a number");  // keys are sorted

  // A directory where the file should be.
  const auto dir = scratch("a-directory.json");
  std::filesystem::create_directories(dir);
  try {
    profile_file::load(dir);
    FAIL() << "no error for a directory";
  } catch (const profile_error& e) {
    EXPECT_NE(std::string(e.what()).find("is a directory"), std::string::npos) << e.what();
  }
}

TEST(tuning_profile, default_location_follows_the_environment) {
  ASSERT_EQ(setenv("TRANSIT_PROFILE", "/tmp/x/p.json", 1), 0);
  EXPECT_EQ(default_profile_path(), std::filesystem::path("/tmp/x/p.json"));
  ASSERT_EQ(unsetenv("TRANSIT_PROFILE"), 0);
  ASSERT_EQ(setenv("XDG_CACHE_HOME", "/var/cache/me", 1), 0);
  EXPECT_EQ(default_profile_path(), std::filesystem::path("/var/cache/me/transit/profile.json"));
  ASSERT_EQ(unsetenv("XDG_CACHE_HOME"), 0);
  ASSERT_EQ(setenv("HOME", "/home/me", 1), 0);
  EXPECT_EQ(default_profile_path(), std::filesystem::path("/home/me/.cache/transit/profile.json"));
  // A relative XDG_CACHE_HOME is invalid (XDG Base Directory spec): HOME's cache instead.
  ASSERT_EQ(setenv("XDG_CACHE_HOME", "relative/cache", 1), 0);
  EXPECT_EQ(default_profile_path(), std::filesystem::path("/home/me/.cache/transit/profile.json"));
  ASSERT_EQ(unsetenv("XDG_CACHE_HOME"), 0);
}

}  // namespace
