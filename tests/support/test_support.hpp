#pragma once
// Helpers shared by the tests. The test main keeps argv, including the --transit-* options ctest
// passes (backend, PE count), so every test can launch its SPMD body with the same settings.
#include <unistd.h>

#include <filesystem>
#include <functional>
#include <string>
#include <system_error>

#include "transit/transit.hpp"

namespace transit::testing {

/// Runs `body` on every PE with the options this test binary was started with (see
/// transit_add_test); extra options such as "--transit-pes-per-node=2" may be added.
int run_spmd(const std::function<void(context&)>& body,
             std::initializer_list<const char*> extra_options = {});

/// A path `name` in a directory of this test process's own (transit-test-PID under the system's
/// temporary directory), created at the first call and removed with everything in it when the
/// process exits, so that tests leave nothing behind.
inline std::filesystem::path scratch_file(const std::string& name) {
  struct directory {
    std::filesystem::path path;
    directory() : path(std::filesystem::temp_directory_path() / ("transit-test-" + std::to_string(::getpid()))) {
      std::filesystem::create_directories(path);
    }
    ~directory() {
      std::error_code ignored;  // at exit there is no one left to report to
      std::filesystem::remove_all(path, ignored);
    }
  };
  static const directory scratch;
  return scratch.path / name;
}

/// The arguments the test binary was started with (after GoogleTest removed its own).
int& saved_argc();
char**& saved_argv();

}  // namespace transit::testing
