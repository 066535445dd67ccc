#pragma once
#include <type_traits>

#include "transit/detail/core/function_ref.hpp"
#include "transit/runtime/context.hpp"

namespace transit {

namespace detail {
/// transit::run without its template: the one compiled entry point.
int run_body(int& argc, char**& argv, function_ref<void(context&)> body);
}  // namespace detail

/// Runs `body` once on every PE (SPMD) and returns 0 when all of them return.
///
/// Removes the --transit-* options it understands from argv (see run_options). Backend: local
/// (threads in this process) unless --transit-backend=mpi, TRANSIT_BACKEND=mpi, or an MPI
/// launcher started the process. Bad options print "transit: error: ..." and return 2.
///
/// An exception escaping `body` on any PE prints "transit: PE <r>: <what()>" and ends the whole
/// job: on mpi through MPI_Abort (nonzero exit status); on local the other PEs are unwound at
/// their next transit call and run returns 1 (a PE stuck outside transit for more than a few
/// seconds ends the process with status 1).
///
/// `body` is any callable taking `context&` (a lambda, a function, a std::function); the PEs of
/// this process call it concurrently, each with its own context, and run returns only after they
/// have, so `body` may refer to the caller's locals.
template <class Body>
  requires std::is_invocable_v<Body&, context&>
int run(int& argc, char**& argv, Body&& body) {
  auto call = [&body](context& ctx) { body(ctx); };
  return detail::run_body(argc, argv, call);
}

/// The transit version, "major.minor.patch". Local, at any time.
const char* version() noexcept;

}  // namespace transit
