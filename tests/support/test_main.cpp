#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "test_support.hpp"

namespace transit::testing {

int& saved_argc() {
  static int argc = 0;
  return argc;
}
char**& saved_argv() {
  static char** argv = nullptr;
  return argv;
}

int run_spmd(const std::function<void(context&)>& body, std::initializer_list<const char*> extra) {
  // transit::run edits argv, so each call gets its own copy.
  std::vector<std::string> args(saved_argv(), saved_argv() + saved_argc());
  args.insert(args.end(), extra.begin(), extra.end());
  std::vector<char*> pointers;
  for (auto& a : args) pointers.push_back(a.data());
  pointers.push_back(nullptr);
  int argc = static_cast<int>(args.size());
  char** argv = pointers.data();
  return transit::run(argc, argv, body);
}

}  // namespace transit::testing

int main(int argc, char** argv) {
  ::testing::InitGoogleTest(&argc, argv);
  transit::testing::saved_argc() = argc;
  transit::testing::saved_argv() = argv;
  return RUN_ALL_TESTS();
}
