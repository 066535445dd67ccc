#include <gtest/gtest.h>

#include <algorithm>
#include <chrono>
#include <string>
#include <thread>
#include <vector>

#include "transit/transit.hpp"

namespace {

struct argv_builder {
  explicit argv_builder(std::vector<std::string> a) : args(std::move(a)) {
    for (auto& s : args) pointers.push_back(s.data());
    pointers.push_back(nullptr);
    argc = static_cast<int>(args.size());
    argv = pointers.data();
  }
  std::vector<std::string> args;
  std::vector<char*> pointers;
  int argc;
  char** argv;
};

std::string error_of(std::vector<std::string> args) {
  argv_builder b(std::move(args));
  try {
    transit::parse_run_options(b.argc, b.argv);
  } catch (const std::invalid_argument& e) {
    return e.what();
  }
  return "no error";
}

TEST(run_options, removes_the_options_it_understands_and_keeps_the_rest) {
  argv_builder b({"prog", "--transit-backend=local", "--keep", "--transit-pes", "5", "x",
                  "--transit-pes-per-node=2", "--transit-watchdog=1.5"});
  const auto o = transit::parse_run_options(b.argc, b.argv);
  EXPECT_EQ(o.backend, "local");
  EXPECT_EQ(o.pes, 5);
  EXPECT_EQ(o.pes_per_node, 2);
  EXPECT_EQ(o.watchdog.count(), 1500);
  ASSERT_EQ(b.argc, 3);
  EXPECT_STREQ(b.argv[1], "--keep");
  EXPECT_STREQ(b.argv[2], "x");
  EXPECT_EQ(b.argv[3], nullptr);
}

TEST(run_options, bad_values_name_the_option_value_and_expectation) {
  EXPECT_EQ(error_of({"p", "--transit-backend=shm"}), "--transit-backend: got 'shm', expected 'local' or 'mpi'");
  EXPECT_EQ(error_of({"p", "--transit-pes=0"}), "--transit-pes: got '0', expected a positive integer");
  EXPECT_EQ(error_of({"p", "--transit-pes=3x"}), "--transit-pes: got '3x', expected a positive integer");
  EXPECT_EQ(error_of({"p", "--transit-pes="}), "--transit-pes: got '', expected a positive integer");
  EXPECT_EQ(error_of({"p", "--transit-pes=99999999999"}), "--transit-pes: got '99999999999', expected a positive integer");
  EXPECT_EQ(error_of({"p", "--transit-pes-per-node=-1"}),
            "--transit-pes-per-node: got '-1', expected a positive integer");
  EXPECT_EQ(error_of({"p", "--transit-watchdog=soon"}),
            "--transit-watchdog: got 'soon', expected 0 (off) or a number of seconds in [0.001, 604800] (one week)");
  EXPECT_NE(error_of({"p", "--transit-pes"}).find("expected a value after it"), std::string::npos);
  EXPECT_NE(error_of({"p", "--transit-nodes=2"}).find("got '--transit-nodes'"), std::string::npos);
}

TEST(run_options, watchdog_is_bounded_and_never_silently_off) {
  // 1e300 s used to reach an undefined double-to-integer conversion; 0.0001 s rounded to 0 (off).
  for (const char* bad : {"1e300", "inf", "nan", "-1", "604801", "0.0001", "1e-300"})
    EXPECT_NE(error_of({"p", std::string("--transit-watchdog=") + bad}).find("expected 0 (off)"), std::string::npos)
        << bad;
  argv_builder week({"p", "--transit-watchdog=604800"});
  EXPECT_EQ(transit::parse_run_options(week.argc, week.argv).watchdog, std::chrono::hours(24 * 7));
  argv_builder ms({"p", "--transit-watchdog=0.001"});
  EXPECT_EQ(transit::parse_run_options(ms.argc, ms.argv).watchdog.count(), 1);
  argv_builder off({"p", "--transit-watchdog=0"});
  EXPECT_EQ(transit::parse_run_options(off.argc, off.argv).watchdog.count(), 0);
}

TEST(run_options, any_local_pe_count_that_can_run_is_accepted) {
  // 13 on 2 cores used to be refused ("expected at most 8 (4 x 2 hardware threads)").
  const int many = 4 * static_cast<int>(std::max(1u, std::thread::hardware_concurrency())) + 5;
  argv_builder plain({"p", "--transit-backend=local", "--transit-pes=" + std::to_string(many)});
  EXPECT_EQ(transit::parse_run_options(plain.argc, plain.argv).pes, many);

  // The kernel's thread limit is the only cap, and the error names it.
  const int limit = transit::max_local_pes();
  EXPECT_GE(limit, many);
  const std::string over = "--transit-pes=" + std::to_string(limit + 1);
  EXPECT_EQ(error_of({"p", "--transit-backend=local", over}),
            "--transit-pes: got '" + std::to_string(limit + 1) + "', expected at most " + std::to_string(limit) +
                " on the local backend (one thread per PE; the kernel's limit on threads, kernel.pid_max or "
                "kernel.threads-max)");

  // --transit-pes-force: still accepted for old scripts, changes nothing, takes no separate value
  // ("x" stays for the program), and does not lift the kernel's limit.
  argv_builder forced({"p", "--transit-backend=local", "--transit-pes=" + std::to_string(many), "--transit-pes-force", "x"});
  const auto o = transit::parse_run_options(forced.argc, forced.argv);
  EXPECT_TRUE(o.pes_force);
  EXPECT_EQ(o.pes, many);
  ASSERT_EQ(forced.argc, 2);
  EXPECT_STREQ(forced.argv[1], "x");
  EXPECT_NE(error_of({"p", "--transit-backend=local", over, "--transit-pes-force"}).find("expected at most"),
            std::string::npos);
  EXPECT_EQ(error_of({"p", "--transit-pes-force=2"}), "--transit-pes-force: got '2', expected 1 (on) or 0 (off)");
  // The mpi backend's PE count is the launcher's: no cap there.
  argv_builder mpi({"p", "--transit-backend=mpi", "--transit-pes=100000000"});
  EXPECT_EQ(transit::parse_run_options(mpi.argc, mpi.argv).pes, 100000000);
}

TEST(run_options, each_option_once_and_nothing_after_dashdash) {
  EXPECT_EQ(error_of({"p", "--transit-pes=2", "--transit-pes", "3"}), "--transit-pes: given more than once, expected once");
  EXPECT_NE(error_of({"p", "--transit-peez"}).find("got '--transit-peez', expected one of"), std::string::npos);
  argv_builder b({"p", "--transit-pes=2", "--", "--transit-pes=3", "y"});
  EXPECT_EQ(transit::parse_run_options(b.argc, b.argv).pes, 2);
  ASSERT_EQ(b.argc, 4);
  EXPECT_STREQ(b.argv[1], "--");
  EXPECT_STREQ(b.argv[2], "--transit-pes=3");
  EXPECT_STREQ(b.argv[3], "y");
  EXPECT_EQ(b.argv[4], nullptr);
}

TEST(run_options, uneven_nodes_make_the_last_node_smaller) {
  const auto m = transit::machine::uniform(7, 3);
  ASSERT_EQ(m.num_nodes(), 3);
  EXPECT_EQ(m.pes_on_node(0), 3);
  EXPECT_EQ(m.pes_on_node(2), 1);
  EXPECT_EQ(m.node_of(6), 2);
  EXPECT_EQ(m.local_rank(6), 0);
  EXPECT_EQ(m.pe_on_node(2, 1), -1);
  const auto one = transit::machine::uniform(2, 8);  // more per node than PEs: one small node
  EXPECT_EQ(one.num_nodes(), 1);
  EXPECT_EQ(one.pes_on_node(0), 2);
}

TEST(machine, explicit_node_ids_need_not_be_contiguous) {
  const auto m = transit::machine::from_node_ids({1, 0, 1, 0, 2});
  EXPECT_EQ(m.num_nodes(), 3);
  EXPECT_EQ(m.pes_on_node(1), 2);
  EXPECT_EQ(m.local_rank(2), 1);
  EXPECT_EQ(m.pe_on_node(0, 1), 3);
  EXPECT_THROW(transit::machine::from_node_ids({0, 2}), std::invalid_argument);
}

}  // namespace
