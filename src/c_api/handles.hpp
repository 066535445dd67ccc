#pragma once
// The C API's handles (include/transit/transit.h) and the guard every entry point runs in: no C++
// exception crosses into C; each becomes a transit_status and this thread's transit_last_error().
#include <cstddef>
#include <cstring>
#include <optional>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include "transit/detail/core/error.hpp"
#include "transit/runtime/context.hpp"
#include "transit/runtime/options.hpp"
#include "transit/runtime/session.hpp"
#include "transit/streamer/options.hpp"
#include "transit/transit.h"

/// A context handle: the session that made it (transit_context_create_*), or none when it lends a
/// context someone else owns (a PE of transit_run_local, or a C++ caller's: c_api::lend).
struct transit_context {
  std::optional<transit::session> session;
  transit::context* ctx = nullptr;
  int objects = 0;  // streamers, arrays and exchanges made on it and not yet destroyed
  int interrupt_hook = -1;  // the progress hook of transit_context_set_interrupt_check, or -1
  std::vector<transit_streamer*> streamers;  // those of them that are streamers, oldest first
};

namespace transit::c_api {

class byte_streamer;  // c_api/byte_streamer.hpp

/// The options of a context the C API makes: the environment's (TRANSIT_*), with the watchdog
/// of transit_set_watchdog when it was called.
run_options c_run_options();

/// A deliver callback or a transit_run_local body returned nonzero.
class callback_error : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

/// Maps the exception being handled to a status and stores its message for transit_last_error().
transit_status status_of_current_exception() noexcept;

/// Whether this thread's last failed call failed because another PE of the job had (job_aborted).
bool last_failure_was_abort() noexcept;

/// Runs `f` (no result) and returns TRANSIT_OK, or the status of what it threw.
template <class F>
transit_status guarded(F&& f) noexcept {
  try {
    std::forward<F>(f)();
    return TRANSIT_OK;
  } catch (...) {
    return status_of_current_exception();
  }
}

/// Frees a streamer, array or exchange (NULL: nothing), collectively as its C++ destructor is.
template <class Handle>
transit_status destroy(Handle* h) noexcept {
  if (h == nullptr) return TRANSIT_OK;
  return guarded([&] {
    --h->owner->objects;
    delete h;
  });
}

/// Stores `message` for transit_last_error() and returns `status` (failures found without a throw).
transit_status fail(transit_status status, std::string message) noexcept;

/// `handle`, or std::invalid_argument naming the call and the missing handle.
template <class T>
T& checked(T* handle, const char* call, const char* what) {
  if (handle == nullptr)
    throw std::invalid_argument(detail::concat(call, ": ", what, ": got NULL, expected a handle from transit_",
                                               what, "_create"));
  return *handle;
}

/// std::invalid_argument naming the call and the NULL pointer argument `what`, when `p` is NULL.
inline void require(const void* p, const char* call, const char* what) {
  if (p == nullptr) throw std::invalid_argument(detail::concat(call, ": ", what, ": got NULL, expected a pointer"));
}

/// The context behind a live context handle.
inline context& pe_of(transit_context* c, const char* call) {
  if (c == nullptr)
    throw std::invalid_argument(detail::concat(call, ": context: got NULL, expected a handle from "
                                               "transit_context_create_local or _mpi, or transit_run_local"));
  if (c->ctx == nullptr) throw std::logic_error(detail::concat(call, ": the context is closed"));
  return *c->ctx;
}

/// A context handle that lends `ctx` (not owned) to the C API, for C++ code that runs C-API code
/// on its own context (transit bench's C-API histogram). It must outlive every object made on it.
inline transit_context lend(context& ctx) {
  transit_context c;
  c.ctx = &ctx;
  return c;
}

/// The integer a C caller passed for an enum parameter, read without loading it as the enum: C
/// passes any int, and loading one outside the enumerators' range as a C++ enum is undefined
/// (UBSan's -fsanitize=enum), so a bad value is checked as the integer it is. Take the enum by
/// reference all the way here: a copy would load it.
template <class Enum>
int c_enum_value(const Enum& e) noexcept {
  static_assert(sizeof(Enum) == sizeof(int), "the C API's enums are int-sized");
  int value;
  std::memcpy(&value, &e, sizeof value);
  return value;
}

/// The reduce_op of `op`, or std::invalid_argument naming `call` and the value.
reduce_op to_op(const transit_op& op, const char* call);

/// transit_streamer_create with `options` instead of the defaults (transit bench compares the C
/// API with streamer<T> under the same options).
transit_status create_streamer(transit_context* ctx, std::size_t item_bytes, transit_deliver_fn deliver, void* user,
                               const streamer_options& options, transit_streamer** out);

/// The C++ streamer behind a handle (its statistics and options, for transit bench's records).
const byte_streamer& streamer_of(const transit_streamer* s);

/// Frees the streamers `c` still holds (a transit_run_local body returned without destroying
/// them), without ending the job: what each lost, or that it lost nothing, for the run's error.
std::string free_streamers_left(transit_context& c);

/// Checks `item_bytes` of a streamer or exchange: 1 to 65536, else std::invalid_argument.
void check_item_bytes(std::size_t item_bytes, const char* call);

}  // namespace transit::c_api
