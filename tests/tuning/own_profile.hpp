#pragma once
// Runs of one test at several PE counts and backends may run at the same time, and ctest gives
// them one TRANSIT_PROFILE: each run takes a file of its own, named after its launch options.
#include <cstdlib>
#include <string>

#include "test_support.hpp"

namespace transit::testing {

/// Call before run_spmd, while the test has one thread: TRANSIT_PROFILE becomes
/// "<TRANSIT_PROFILE>.<launch options>", and that path is returned.
inline std::string use_own_profile_file() {
  std::string path = std::getenv("TRANSIT_PROFILE") != nullptr ? std::getenv("TRANSIT_PROFILE") : "profile.json";
  for (int i = 1; i < saved_argc(); ++i) {
    std::string arg = saved_argv()[i];
    if (arg.rfind("--transit-", 0) != 0) continue;
    for (char& c : arg)
      if (c == '/' || c == '=') c = '-';
    // Appended in two steps: GCC 12 at -O3 warns -Wrestrict (a false positive) on "." + string.
    path += '.';
    path.append(arg, 10);
  }
  setenv("TRANSIT_PROFILE", path.c_str(), 1);
  return path;
}

}  // namespace transit::testing
