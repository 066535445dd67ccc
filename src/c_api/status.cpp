// transit_last_error, transit_version, and the mapping of C++ exceptions to transit_status.
#include <exception>
#include <new>
#include <stdexcept>
#include <string>

#include "c_api/handles.hpp"
#include "transit/detail/runtime/context_access.hpp"

#ifndef TRANSIT_VERSION_STRING
#error "TRANSIT_VERSION_STRING is set by CMakeLists.txt from PROJECT_VERSION"
#endif

namespace transit::c_api {

namespace {

// One per thread: a PE thread's failure never overwrites another's message.
thread_local std::string last_error;
thread_local bool last_was_abort = false;

}  // namespace

transit_status fail(transit_status status, std::string message) noexcept {
  try {
    last_was_abort = false;
    last_error = std::move(message);
  } catch (...) {
    last_error.clear();  // out of memory for the message: the status still says what happened
  }
  return status;
}

transit_status status_of_current_exception() noexcept {
  // Most specific first: out_of_range and invalid_argument are logic_errors too.
  try {
    throw;
  } catch (const callback_error& e) {
    return fail(TRANSIT_CALLBACK_ERROR, e.what());
  } catch (const std::out_of_range& e) {
    return fail(TRANSIT_OUT_OF_RANGE, e.what());
  } catch (const std::invalid_argument& e) {
    return fail(TRANSIT_INVALID_ARGUMENT, e.what());
  } catch (const std::logic_error& e) {
    return fail(TRANSIT_LOGIC_ERROR, e.what());
  } catch (const detail::job_aborted& e) {
    const transit_status s = fail(TRANSIT_RUNTIME_ERROR, e.what());
    last_was_abort = true;
    return s;
  } catch (const std::bad_alloc&) {
    return fail(TRANSIT_RUNTIME_ERROR, "out of memory");
  } catch (const std::exception& e) {  // runtime_error, wire errors, job_aborted
    return fail(TRANSIT_RUNTIME_ERROR, e.what());
  } catch (...) {
    return fail(TRANSIT_RUNTIME_ERROR, "an unknown exception");
  }
}

bool last_failure_was_abort() noexcept { return last_was_abort; }

void check_item_bytes(std::size_t item_bytes, const char* call) {
  if (item_bytes == 0 || item_bytes > 65536)
    detail::throw_invalid(detail::concat(call, ": item_bytes"), item_bytes, "1 to 65536");
}

}  // namespace transit::c_api

extern "C" {

const char* transit_last_error(void) { return transit::c_api::last_error.c_str(); }

const char* transit_version(void) { return TRANSIT_VERSION_STRING; }

}
