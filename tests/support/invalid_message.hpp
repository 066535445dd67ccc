#pragma once
// The message of the std::invalid_argument that `call` throws, or a test failure if it throws none,
// so that tests can check that an error names the value and what was expected.
#include <gtest/gtest.h>

#include <stdexcept>
#include <string>

namespace transit::testing {

template <class Call>
std::string invalid_message(Call&& call) {
  try {
    call();
  } catch (const std::invalid_argument& e) {
    return e.what();
  }
  ADD_FAILURE() << "expected std::invalid_argument";
  return {};
}

}  // namespace transit::testing
