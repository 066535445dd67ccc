#include <gtest/gtest.h>

#include <string>
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
  EXPECT_EQ(error_of({"p", "--transit-watchdog=soon"}), "--transit-watchdog: got 'soon', expected a number of seconds >= 0");
  EXPECT_NE(error_of({"p", "--transit-pes"}).find("expected a value after it"), std::string::npos);
  EXPECT_NE(error_of({"p", "--transit-nodes=2"}).find("got '--transit-nodes'"), std::string::npos);
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
