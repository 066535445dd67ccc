#pragma once
// Helpers shared by the tests. The test main keeps argv, including the --transit-* options ctest
// passes (backend, PE count), so every test can launch its SPMD body with the same settings.
#include <functional>

#include "transit/transit.hpp"

namespace transit::testing {

/// Runs `body` on every PE with the options this test binary was started with (see
/// transit_add_test); extra options such as "--transit-pes-per-node=2" may be added.
int run_spmd(const std::function<void(context&)>& body,
             std::initializer_list<const char*> extra_options = {});

/// The arguments the test binary was started with (after GoogleTest removed its own).
int& saved_argc();
char**& saved_argv();

}  // namespace transit::testing
