#pragma once
// Helpers shared by the tests. The test main keeps argv, including the --transit-* options ctest
// passes (backend, PE count), so every test can launch its SPMD body with the same settings.
#include <unistd.h>

#include <cstdlib>
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

/// Sets environment variable `name` to `value` for its lifetime, then restores what was there
/// (unset if nothing was). For variables a component reads when it is constructed.
class scoped_env {
 public:
  scoped_env(const char* name, const char* value) : name_(name) {
    const char* before = std::getenv(name);
    had_ = before != nullptr;
    if (had_) before_ = before;
    ::setenv(name, value, 1);
  }
  scoped_env(const scoped_env&) = delete;
  scoped_env& operator=(const scoped_env&) = delete;
  ~scoped_env() {
    if (had_) {
      ::setenv(name_, before_.c_str(), 1);
    } else {
      ::unsetenv(name_);
    }
  }

 private:
  const char* name_;
  bool had_ = false;
  std::string before_;
};

/// The arguments the test binary was started with (after GoogleTest removed its own).
int& saved_argc();
char**& saved_argv();

}  // namespace transit::testing
