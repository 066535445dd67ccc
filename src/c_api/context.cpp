// The C API's contexts: one local PE (transit::session), PE threads (session::run), and the
// collectives of transit::context. The mpi context is in mpi_context.cpp.
#include <algorithm>
#include <atomic>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <memory>
#include <span>
#include <thread>

#include "c_api/handles.hpp"
#include "transit/detail/core/clock.hpp"
#include "transit/detail/runtime/context_access.hpp"
#include "transit/runtime/options.hpp"

namespace transit::c_api {

namespace {

// transit_set_watchdog's milliseconds; -1 until it is called (the environment's then).
std::atomic<std::int64_t> watchdog_ms{-1};

run_options local_options(int pes) {
  run_options o = c_run_options();
  o.backend = "local";
  o.pes = pes;
  return o;
}

}  // namespace

run_options c_run_options() {
  run_options o = run_options_from_environment();
  if (const std::int64_t ms = watchdog_ms.load(); ms >= 0) o.watchdog = std::chrono::milliseconds(ms);
  return o;
}

reduce_op to_op(const transit_op& op, const char* call) {
  switch (c_enum_value(op)) {
    case TRANSIT_SUM: return reduce_op::sum;
    case TRANSIT_MIN: return reduce_op::min;
    case TRANSIT_MAX: return reduce_op::max;
  }
  detail::throw_invalid(detail::concat(call, ": op"), c_enum_value(op), "TRANSIT_SUM, TRANSIT_MIN or TRANSIT_MAX");
}

namespace {

// Runs one PE's body of transit_run_local on a context handle that lends the PE's context.
void run_body(context& ctx, int (*body)(transit_context*, void*), void* user) {
  transit_context handle = lend(ctx);
  const int code = body(&handle, user);
  // A body that failed because another PE did is unwound like a C++ PE: the run reports the
  // first failure, not this one.
  if (code != 0 && last_failure_was_abort()) throw detail::job_aborted{};
  if (code != 0) {
    // Most bodies return nonzero because a transit call failed: its message is what to read.
    const std::string last = transit_last_error();
    throw callback_error(detail::concat("transit_run_local: the body returned ", code, " on PE ", ctx.rank(),
                                        last.empty() ? "" : " (the last transit call that failed there: ", last,
                                        last.empty() ? "" : ")"));
  }
  if (handle.objects != 0) {
    const int left = handle.objects;
    const std::string streamers = free_streamers_left(handle);
    throw std::logic_error(detail::concat("transit_run_local: the body of PE ", ctx.rank(), " returned with ", left,
                                          " streamers, arrays or exchanges not destroyed",
                                          streamers.empty() ? "" : "; its streamers, freed now: ", streamers));
  }
}

}  // namespace

}  // namespace transit::c_api

using namespace transit::c_api;

extern "C" {

transit_status transit_context_create_local(transit_context** out) {
  return guarded([&] {
    require(out, "transit_context_create_local", "out");
    *out = nullptr;
    auto c = std::make_unique<transit_context>();
    c->session.emplace(local_options(1));
    c->ctx = &c->session->pe();
    *out = c.release();
  });
}

transit_status transit_run_local(int pes, int (*body)(transit_context* ctx, void* user), void* user) {
  return guarded([&] {
    if (pes < 0)
      transit::detail::throw_invalid("transit_run_local: pes", pes, "0 (the hardware threads) or a positive PE count");
    require(reinterpret_cast<const void*>(body), "transit_run_local", "body");
    const int count = pes > 0 ? pes : static_cast<int>(std::max(1U, std::thread::hardware_concurrency()));
    transit::session s(local_options(count));
    s.run([&](transit::context& ctx) { run_body(ctx, body, user); });
    s.close();
  });
}

transit_status transit_context_destroy(transit_context* c) {
  if (c == nullptr) return TRANSIT_OK;
  return guarded([&] {
    if (!c->session)
      throw std::logic_error("transit_context_destroy: this context belongs to transit_run_local, which destroys it");
    if (c->objects != 0)
      throw std::logic_error(transit::detail::concat("transit_context_destroy: ", c->objects,
                                                     " streamers, arrays or exchanges of this context are not "
                                                     "destroyed: destroy them first (nothing was freed)"));
    c->ctx = nullptr;
    const std::unique_ptr<transit_context> freed(c);  // freed when closing reports a failure too
    c->session->close();
  });
}

int transit_rank(const transit_context* c) {
  if (c == nullptr || c->ctx == nullptr) {
    fail(TRANSIT_INVALID_ARGUMENT, "transit_rank: context: got NULL or a closed context, expected a live one");
    return -1;
  }
  return c->ctx->rank();
}

int transit_size(const transit_context* c) {
  if (c == nullptr || c->ctx == nullptr) {
    fail(TRANSIT_INVALID_ARGUMENT, "transit_size: context: got NULL or a closed context, expected a live one");
    return -1;
  }
  return c->ctx->size();
}

transit_status transit_barrier(transit_context* c) {
  return guarded([&] { pe_of(c, "transit_barrier").barrier(); });
}

transit_status transit_allreduce(transit_context* c, void* values, std::size_t count, transit_type type,
                                 transit_op op) {
  return guarded([&] {
    constexpr const char* call = "transit_allreduce";
    transit::context& ctx = pe_of(c, call);
    if (count != 0) require(values, call, "values");
    const transit::reduce_op r = to_op(op, call);
    switch (c_enum_value(type)) {
      case TRANSIT_INT64: ctx.allreduce(std::span(static_cast<std::int64_t*>(values), count), r); return;
      case TRANSIT_DOUBLE: ctx.allreduce(std::span(static_cast<double*>(values), count), r); return;
    }
    transit::detail::throw_invalid("transit_allreduce: type", c_enum_value(type), "TRANSIT_INT64 or TRANSIT_DOUBLE");
  });
}

transit_status transit_context_set_interrupt_check(transit_context* c, int (*check)(void*), void* user) {
  return guarded([&] {
    transit::context& ctx = pe_of(c, "transit_context_set_interrupt_check");
    if (c->interrupt_hook >= 0) transit::detail::context_access::remove_progress_hook(ctx, c->interrupt_hook);
    c->interrupt_hook = -1;
    if (check == nullptr) return;
    // A progress hook runs in every waiting loop of the PE: one clock read per round, the check
    // itself (which may take a lock such as Python's GIL) at most every 20 ms.
    auto next = transit::detail::steady_clock::now();
    c->interrupt_hook = transit::detail::context_access::add_progress_hook(ctx, [check, user, next]() mutable {
      const auto now = transit::detail::steady_clock::now();
      if (now < next) return false;
      next = now + std::chrono::milliseconds(20);
      if (check(user) != 0) throw callback_error("interrupted: the interrupt check returned nonzero while waiting");
      return false;
    });
  });
}

int transit_started_by_mpi_launcher(void) { return transit::started_by_mpi_launcher() ? 1 : 0; }

transit_status transit_set_watchdog(double seconds) {
  return guarded([&] {
    // The range of --transit-watchdog: below a millisecond would round to 0, which means off.
    if (!(seconds == 0 || seconds >= 0.001) || !(seconds <= 7 * 24 * 3600))
      transit::detail::throw_invalid("transit_set_watchdog: seconds", seconds,
                                     "0 (off) or a number of seconds in [0.001, 604800] (one week)");
    watchdog_ms.store(std::llround(seconds * 1000.0));
  });
}

#ifndef TRANSIT_WITH_MPI
transit_status transit_context_create_mpi(const void*, transit_context** out) {
  if (out != nullptr) *out = nullptr;
  return fail(TRANSIT_NOT_BUILT, "transit_context_create_mpi: this transit was built without MPI (TRANSIT_WITH_MPI=OFF)");
}

// transit/transit_mpi.h's call, for the symbol: without MPI no program can pass a communicator
// it made with this transit, and the argument (an MPI_Comm of some other MPI) is never read.
transit_status transit_context_create_comm(const void*, transit_context** out) {
  if (out != nullptr) *out = nullptr;
  return fail(TRANSIT_NOT_BUILT, "transit_context_create_comm: this transit was built without MPI (TRANSIT_WITH_MPI=OFF)");
}

transit_status transit_prepare_mpi(void) {
  return fail(TRANSIT_NOT_BUILT, "transit_prepare_mpi: this transit was built without MPI (TRANSIT_WITH_MPI=OFF)");
}
#endif

}
