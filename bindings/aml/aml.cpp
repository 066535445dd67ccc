// transit_aml: AML's C interface (aml.h beside this file) as a thin front end on transit's active
// messages. An AML message is a call (AML handler id, the bytes) of one transit handler per size
// up to 32 bytes, or of one for any size, and the object is built with_callers, so the handler
// learns the sending PE from transit (routed calls carry it) instead of from the message. Checks
// live here once, before anything is sent.
#include "aml.h"

#include <array>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <exception>
#include <memory>
#include <optional>
#include <span>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include "c_api/handles.hpp"
#include "transit/active/active_messages.hpp"
#include "transit/detail/core/clock.hpp"
#include "transit/detail/core/error.hpp"
#include "transit/detail/runtime/context_access.hpp"
#include "transit/runtime/context.hpp"
#include "transit/runtime/options.hpp"
#include "transit/runtime/session.hpp"
#if TRANSIT_WITH_MPI
#include "transit/mpi.hpp"
#endif

namespace {

using transit::detail::concat;
using aml_handler = void (*)(int, void*, int);

/// A mistake of the program: reported by report (the error handler, or stderr and the
/// job's end), after which the failing call does nothing.
class mistake : public std::invalid_argument {
 public:
  using std::invalid_argument::invalid_argument;
};

/// One PE's AML: the active messages it sends through, and its handler table.
struct engine {
  std::optional<transit::session> session;  // aml_init's, on MPI_COMM_WORLD
  bool owns_mpi = false;                     // aml_init initialised MPI, so aml_finalize ends it
  bool attached = false;                     // made by transit_aml_attach, not aml_init
  transit::context* ctx = nullptr;
  std::optional<transit::active_messages> am;
  std::array<aml_handler, 256> handlers{};
  int rank = 0;
  int size = 0;
  int handler_depth = 0;  // > 0 while a handler runs on this PE

  void run_handler(int type, int from, const void* data, int length) {
    const aml_handler f = handlers[static_cast<std::size_t>(type)];
    ++handler_depth;
    struct leave {
      int& depth;
      ~leave() { --depth; }
    } guard{handler_depth};
    f(from, const_cast<void*>(data), length);  // AML hands its handlers a void*
  }
};

// The calling thread's engine: aml_init's or transit_aml_attach's. Thread-local: a PE is a thread
// when attached, and under SimGrid every simulated rank is a thread of one process that calls
// aml_init. Initial-exec: the per-message lookup reads a thread-pointer slot, not a call.
#if TRANSIT_SIMGRID
// Under SimGrid's SMPI all simulated ranks run in one thread (docs/simulation.md): a thread_local
// is one per process, so each rank's engine is found by its rank in MPI_COMM_WORLD instead.
std::vector<engine*> engines_by_rank;
int world_rank() {
  int initialised = 0;
  MPI_Initialized(&initialised);  // before aml_init's MPI_Init: no rank yet, and no engine
  if (initialised == 0) return -1;
  int rank = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  return rank;
}
struct rank_slot {
  operator engine*() const {
    const int r = world_rank();
    return r >= 0 && static_cast<std::size_t>(r) < engines_by_rank.size() ? engines_by_rank[static_cast<std::size_t>(r)]
                                                                          : nullptr;
  }
  rank_slot& operator=(engine* e) {
    const auto r = static_cast<std::size_t>(world_rank());
    if (engines_by_rank.size() <= r) engines_by_rank.resize(r + 1, nullptr);
    engines_by_rank[r] = e;
    return *this;
  }
  engine* operator->() const { return *this; }
};
rank_slot current_engine;
#else
[[gnu::tls_model("initial-exec")]] thread_local engine* current_engine = nullptr;
#endif

transit_aml_error_fn error_handler = nullptr;
void* error_user = nullptr;

engine* current() noexcept { return current_engine; }

engine& require_engine(const char* call) {
  engine* e = current();
  if (e == nullptr)
    throw mistake(concat(call, ": AML is not initialised on this thread: call aml_init (or transit_aml_attach) first"));
  return *e;
}

// An arrived AML message, on its destination PE, whichever handler of transit's carried it.
void receive(transit::active_messages& am, std::uint8_t type, const std::byte* data, std::size_t length) {
  engine& e = *current();
  const int from = am.caller();
  if (e.handlers[type] == nullptr)  // bytes from the wire: the sender checked, a peer may not have
    throw std::runtime_error(concat("AML message for handler id ", int{type}, " from PE ", from, " to PE ", e.rank,
                                    ", which has no handler registered under that id"));
  e.run_handler(type, from, data, static_cast<int>(length));
}

// The transit handler of AML messages of any size (a lambda: its record then carries no code
// address).
constexpr auto deliver = [](transit::active_messages& am, std::uint8_t type, std::span<const std::byte> data) {
  receive(am, type, data.data(), data.size());
};

// Messages of up to small_bytes, the sizes AML programs send most (graph500: 4 to 16 bytes),
// travel as calls of scalars only: their record (handler id, AML id, the bytes) has its size and
// call class at compile time, is written in one pass with a fixed-size copy, and carries no
// length. One handler per size; the bytes reach the user's handler from the call's argument.
constexpr std::size_t small_bytes = 32;

template <std::size_t N>
struct small_payload {
  std::byte bytes[N];
};

template <std::size_t N>
constexpr auto deliver_small = [](transit::active_messages& am, std::uint8_t type, const small_payload<N>& data) {
  receive(am, type, data.bytes, N);
};

template <std::size_t N>
void send_small(engine& e, int node, int type, const void* bytes) {
  small_payload<N> payload;
  std::memcpy(payload.bytes, bytes, N);
  e.am->async(node, deliver_small<N>, static_cast<std::uint8_t>(type), payload);
}

using small_sender = void (*)(engine&, int, int, const void*);
// send_small<N> for N = 1 .. small_bytes, by N - 1 (0 bytes take the general path).
constexpr auto small_senders = []<std::size_t... I>(std::index_sequence<I...>) {
  return std::array<small_sender, sizeof...(I)>{&send_small<I + 1>...};
}(std::make_index_sequence<small_bytes>());

// What a failed call tells the program: its error handler, or stderr and the job's end.
void report(const std::string& message) {
  if (error_handler != nullptr) {
    error_handler(message.c_str(), error_user);
    return;
  }
  // transit ends the job, every PE of it, with the message (on stderr, naming this PE).
  if (engine* e = current(); e != nullptr && e->ctx != nullptr)
    transit::detail::context_access::end_job(*e->ctx, "transit_aml: " + message);
  std::fprintf(stderr, "transit_aml: %s\n", message.c_str());
  std::fflush(stderr);
  std::exit(1);
}

/// Runs an AML call's body; a mistake or a failure becomes report()'s message.
template <class F>
void guarded(F&& f) noexcept {
  try {
    std::forward<F>(f)();
  } catch (const std::exception& e) {
    report(e.what());
  } catch (...) {
    report("an unknown exception");
  }
}

void check_length(const char* call, int length, const void* data) {
  if (length < 0 || length > TRANSIT_AML_MAX_LENGTH)
    throw mistake(concat(call, ": length ", length, " is outside [0, ", TRANSIT_AML_MAX_LENGTH,
                         "] (TRANSIT_AML_MAX_LENGTH bytes)"));
  if (data == nullptr && length > 0)
    throw mistake(concat(call, ": srcaddr is NULL with length ", length, ": expected the address of the bytes"));
}

void check_registered(const engine& e, const char* call, int type) {
  if (type < 0 || type > 255)
    throw mistake(concat(call, ": handler id ", type, " is outside [0, 255]"));
  if (e.handlers[static_cast<std::size_t>(type)] == nullptr)
    throw mistake(concat(call, ": handler id ", type,
                         " is not registered: call aml_register_handler(f, ", type, ") on every PE first"));
}

void start(engine& e, transit::context& ctx) {
  e.ctx = &ctx;
  e.rank = ctx.rank();
  e.size = ctx.size();
  e.am.emplace(ctx, transit::streamer_options{}, transit::active_messages::with_callers);
}

void barrier(engine& e, const char* call) {
  if (e.handler_depth > 0)
    throw mistake(concat(call, " called from a handler: it is collective; a handler may only call aml_send"));
  e.am->barrier();
}

}  // namespace

extern "C" {

int aml_init(int* argc, char*** argv) {
  int result = -1;
  guarded([&] {
    if (current() != nullptr) throw mistake("aml_init: AML is already initialised on this thread");
#if TRANSIT_WITH_MPI
    auto e = std::make_unique<engine>();
    int initialised = 0;
    MPI_Initialized(&initialised);
    if (initialised == 0) {
      static_cast<void>(transit::prepare_mpi_environment());  // before MPI_Init, as transit::run does
      if (MPI_Init(argc, argv) != MPI_SUCCESS) throw std::runtime_error("aml_init: MPI_Init failed");
      e->owns_mpi = true;
    }
    // transit's options: TRANSIT_* and --transit-* arguments, taken out of argv as MPI_Init takes
    // its own, so the program sees only its arguments (scripts/simulate passes the platform so).
    const transit::run_options options = argc != nullptr && argv != nullptr && *argv != nullptr
                                             ? transit::parse_run_options(*argc, *argv)
                                             : transit::run_options_from_environment();
    e->session.emplace(transit::attach(MPI_COMM_WORLD, options));
    start(*e, e->session->pe());
    current_engine = e.release();
    result = 0;
#else
    static_cast<void>(argc);
    static_cast<void>(argv);
    throw mistake("aml_init: this transit_aml was built without MPI; attach it to a context (transit_aml_attach)");
#endif
  });
  return result;
}

void aml_finalize(void) {
  guarded([] {
    engine& e = require_engine("aml_finalize");
    if (e.attached) throw mistake("aml_finalize: AML was attached to a context here: end it with transit_aml_detach");
    barrier(e, "aml_finalize");
    e.am.reset();
    e.session.reset();  // collective: transit leaves the communicator before MPI ends
    const bool owns_mpi = e.owns_mpi;
    delete current_engine;
    current_engine = nullptr;
#if TRANSIT_WITH_MPI
    if (owns_mpi) MPI_Finalize();
#else
    static_cast<void>(owns_mpi);
#endif
  });
}

void aml_barrier(void) {
  guarded([] { barrier(require_engine("aml_barrier"), "aml_barrier"); });
}

void aml_register_handler(void (*f)(int, void*, int), int n) {
  guarded([&] {
    engine& e = require_engine("aml_register_handler");
    if (n < 0 || n > 255) throw mistake(concat("aml_register_handler: handler id ", n, " is outside [0, 255]"));
    if (f == nullptr) throw mistake(concat("aml_register_handler: the handler for id ", n, " is NULL"));
    barrier(e, "aml_register_handler");  // messages for the old handler are handled by it
    // Collective with one id: a PE registering another would handle messages with the wrong code.
    int extremes[2] = {n, -n};
    e.ctx->allreduce(std::span<int>(extremes), transit::reduce_op::max);
    const int highest = extremes[0];
    const int lowest = -extremes[1];
    if (lowest != highest)
      throw mistake(concat("aml_register_handler: the PEs register different handler ids (", lowest, " to ", highest,
                           "): the call is collective, with one id on every PE"));
    e.handlers[static_cast<std::size_t>(n)] = f;
  });
}

namespace {

// aml_send's rare paths, kept out of its own code so that the per-message path stays small: the
// report of a mistake, and messages of 0 or more than small_bytes bytes.
[[gnu::noinline, gnu::cold]] void report_send_mistake(const void* srcaddr, int type, int length, int node) {
  guarded([&] {
    engine& checked = require_engine("aml_send");
    check_registered(checked, "aml_send", type);
    check_length("aml_send", length, srcaddr);
    throw mistake(concat("aml_send: destination PE ", node, " is outside [0, ", checked.size, ")"));
  });
}

[[gnu::noinline]] void send_any(engine& e, const void* srcaddr, int type, int length, int node) {
  guarded([&] {
    e.am->async(node, deliver, static_cast<std::uint8_t>(type),
                std::span<const std::byte>(static_cast<const std::byte*>(srcaddr), static_cast<std::size_t>(length)));
  });
}

}  // namespace

void aml_send(void* srcaddr, int type, int length, int node) {
  engine* e = current();
  // The checks every message passes; the messages themselves leave through active_messages.
  if (e == nullptr || static_cast<unsigned>(type) > 255u || e->handlers[static_cast<std::size_t>(type)] == nullptr ||
      static_cast<unsigned>(length) > static_cast<unsigned>(TRANSIT_AML_MAX_LENGTH) ||
      static_cast<unsigned>(node) >= static_cast<unsigned>(e->size) || (srcaddr == nullptr && length > 0))
      [[unlikely]] {
    report_send_mistake(srcaddr, type, length, node);
    return;
  }
  if (node == e->rank && e->handler_depth == 0) {
    e->run_handler(type, node, srcaddr, length);  // AML runs a message to itself at once
    return;
  }
  if (static_cast<unsigned>(length - 1) < small_bytes) {
    try {
      small_senders[static_cast<std::size_t>(length) - 1](*e, node, type, srcaddr);
    } catch (...) {
      guarded([] { throw; });
    }
    return;
  }
  send_any(*e, srcaddr, type, length, node);
}

int aml_my_pe(void) {
  const engine* e = current();
  return e != nullptr ? e->rank : 0;
}

int aml_n_pes(void) {
  const engine* e = current();
  return e != nullptr ? e->size : 1;
}

double transit_aml_time(void) {
  const auto now = transit::detail::steady_clock::now().time_since_epoch();
  return std::chrono::duration<double>(now).count();
}

void transit_aml_allreduce(void* value, size_t bytes, int op) {
  guarded([&] {
    engine& e = require_engine("aml_long_allreduce");
    if (op < 0 || op > 2) throw mistake(concat("aml_long_allreduce: op ", op, " is not 0 (sum), 1 (min) or 2 (max)"));
    if (value == nullptr) throw mistake("aml_long_allreduce: the value's address is NULL");
    const auto rop = op == 0 ? transit::reduce_op::sum : op == 1 ? transit::reduce_op::min : transit::reduce_op::max;
    const auto reduce = [&]<class T>(T v) {  // through a copy: the caller's value may be unaligned
      std::memcpy(&v, value, sizeof v);
      v = e.ctx->allreduce(v, rop);
      std::memcpy(value, &v, sizeof v);
    };
    if (bytes == 8) {
      reduce(std::int64_t{});
    } else if (bytes == 4) {
      reduce(std::int32_t{});
    } else {
      throw mistake(concat("aml_long_allreduce: the value has ", bytes,
                           " bytes: expected a signed integer of 8 (long, long long, int64_t) or 4 (int)"));
    }
  });
}

int transit_aml_attach(struct transit_context* ctx) {
  int result = -1;
  guarded([&] {
    if (ctx == nullptr || ctx->ctx == nullptr)
      throw mistake("transit_aml_attach: the context is NULL: expected one from transit_context_create_* or "
                    "transit_run_local");
    if (current_engine != nullptr)
      throw mistake(current_engine->attached ? "transit_aml_attach: AML is already attached on this thread"
                                             : "transit_aml_attach: AML was initialised by aml_init on this thread");
    auto e = std::make_unique<engine>();
    e->attached = true;
    start(*e, *ctx->ctx);
    current_engine = e.release();
    result = 0;
  });
  return result;
}

void transit_aml_detach(void) {
  guarded([] {
    engine& e = require_engine("transit_aml_detach");
    if (!e.attached) throw mistake("transit_aml_detach: AML was started by aml_init: end it with aml_finalize");
    barrier(e, "transit_aml_detach");
    delete current_engine;
    current_engine = nullptr;
  });
}

void transit_aml_set_error_handler(transit_aml_error_fn f, void* user) {
  error_handler = f;
  error_user = user;
}

}  // extern "C"
