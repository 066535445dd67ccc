// exchange_engine: picks the method of each run (automatic: by measured time) and hands the run to
// it; exchange_port: the channel, parking and counters the transport-based methods share.
#include "transit/detail/exchange/engine.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <cstdlib>
#include <stdexcept>

#include "methods.hpp"
#include "transit/detail/core/clock.hpp"
#include "transit/detail/core/error.hpp"
#include "transit/runtime/options.hpp"
#include "core/simulated_costs.hpp"
#include "core/wire_error.hpp"
#include "trace/recorder.hpp"

namespace transit {

namespace {
constexpr exchange_method all_methods[] = {exchange_method::automatic,      exchange_method::direct,
                                           exchange_method::crystal_router, exchange_method::grid,
                                           exchange_method::mpi_alltoallv,  exchange_method::mpi_neighbor};
}  // namespace

std::string_view to_string(exchange_method m) noexcept {
  switch (m) {
    case exchange_method::automatic: return "automatic";
    case exchange_method::direct: return "direct";
    case exchange_method::crystal_router: return "crystal_router";
    case exchange_method::grid: return "grid";
    case exchange_method::mpi_alltoallv: return "mpi_alltoallv";
    case exchange_method::mpi_neighbor: return "mpi_neighbor";
  }
  return "unknown";
}

exchange_method parse_exchange_method(std::string_view name) {
  for (const exchange_method m : all_methods) {
    if (name == to_string(m)) return m;
  }
  detail::throw_invalid("exchange method", name,
                        "one of automatic, direct, crystal_router, grid, mpi_alltoallv, mpi_neighbor");
}

namespace detail {

namespace {

// automatic's schedule (selection.hpp, docs/exchange.md "How automatic chooses") is run here in
// plans of batches. A timed batch starts with a barrier, so that one PE's late arrival is not
// charged to the method; its runs follow each other as an application's do (a PE may run ahead
// into the next run), and only the time inside run() counts. A batch's time is its slowest PE's
// (one allreduce per plan, as gslib's set-up does).

// automatic re-chooses when a run's volume differs from the one it chose at by more than this.
constexpr std::uint64_t volume_change = 4;

bool is_mpi_only(exchange_method m) {
  return m == exchange_method::mpi_alltoallv || m == exchange_method::mpi_neighbor;
}

exchange_method requested_method(const context& ctx, const exchange_options& options) {
  exchange_method m = options.method;
  if (m == exchange_method::automatic) {
    if (const char* env = std::getenv("TRANSIT_EXCHANGE_METHOD"); env != nullptr && *env != '\0') {
      try {
        m = parse_exchange_method(env);
      } catch (const std::invalid_argument&) {
        throw_invalid("TRANSIT_EXCHANGE_METHOD", env,
                      "one of automatic, direct, crystal_router, grid, mpi_alltoallv, mpi_neighbor");
      }
    }
  }
  const bool mpi_available = context_access::net(ctx).mpi() != nullptr;
  if (is_mpi_only(m) && !mpi_available)
    throw_invalid("exchange method", to_string(m),
                  concat("a method of the ", ctx.backend(),
                         " backend (automatic, direct, crystal_router or grid): mpi_alltoallv and "
                         "mpi_neighbor need the mpi backend"));
#ifndef TRANSIT_WITH_MPI
  if (is_mpi_only(m))
    throw_invalid("exchange method", to_string(m), "a method of a transit built without MPI");
#endif
  if (is_mpi_only(m) && ctx.options().threads_per_rank > 1)
    throw_invalid("exchange method", to_string(m),
                  concat("automatic, direct, crystal_router or grid with ", ctx.options().threads_per_rank,
                         " PE threads per rank: MPI's collectives run one PE per rank"));
  return m;
}

virtual_grid grid_for(const context& ctx, const exchange_options& options) {
  if (!options.grid) return virtual_grid::balanced(ctx.size(), 2);
  if (options.grid->num_pes() != ctx.size())
    throw_invalid("exchange_options.grid", concat(options.grid->str(), " for ", options.grid->num_pes(), " PEs"),
                  concat("a grid for the job's ", ctx.size(), " PEs"));
  return *options.grid;
}

}  // namespace

void outgoing_plan::copy(const outgoing_record& r, std::uint64_t offset, std::uint64_t n, std::byte* out) const {
  for (std::size_t i = r.first_span; n > 0 && i < r.first_span + r.span_count; ++i) {
    const byte_span& s = spans[i];
    if (offset >= s.bytes) {
      offset -= s.bytes;
      continue;
    }
    const std::uint64_t take = std::min(n, s.bytes - offset);
    std::memcpy(out, s.data + offset, static_cast<std::size_t>(take));
    out += take;
    n -= take;
    offset = 0;
  }
  TRANSIT_ASSERT(n == 0, "copy beyond the end of an outgoing record");
}

// ---- exchange_port ----

exchange_port::exchange_port(context& ctx, exchange_stats& stats)
    : ctx_(ctx),
      stats_(stats),
      rank_(ctx.rank()),
      size_(ctx.size()),
      channel_(context_access::mail(ctx).open_channel()),
      group_(context_access::net(ctx).make_group()) {}

exchange_port::~exchange_port() {
  release();
  // After a finished run nothing is in flight on the channel (every method's end waits for all its
  // messages). Messages here mean a peer already ran the exchange again: the calls were not
  // collective, and what it sent is lost. Say so and end the job rather than let that peer hang.
  const std::size_t lost = inbox_.size() + parked_.size() + context_access::mail(ctx_).close_channel(channel_);
  if (lost == 0 || std::uncaught_exceptions() > 0) return;  // a failing job reports its own failure
  context_access::end_job(ctx_, concat("sparse_exchange #", channel_, " destroyed after run ", run_, " with ", lost,
                                       " messages of a later run undelivered: a peer called run() again; "
                                       "destroy an exchange on every PE after the same number of runs"));
}

message_buffer exchange_port::make_message(exchange_message_kind kind, std::uint16_t step, std::uint64_t body_bytes) {
  message_buffer m = context_access::net(ctx_).allocate(static_cast<std::size_t>(sizeof(exchange_wire_header) + body_bytes));
  const exchange_wire_header h{run_, static_cast<std::uint16_t>(kind), step, 0, 0};
  std::memcpy(m.payload(), &h, sizeof h);
  m.set_size(static_cast<std::size_t>(sizeof h + body_bytes));
  return m;
}

void exchange_port::count_sent(const message_buffer& m) {
  ++stats_.messages_sent;
  stats_.bytes_sent += m.size();
  if constexpr (simulated_build) {
    // Modelled simulation: each record was copied into this message (at its source or at a hop).
    exchange_wire_header h;
    std::memcpy(&h, m.payload(), sizeof h);
    charge_item_hops(h.records);
  }
}

void exchange_port::send(int dest, message_buffer&& m) {
  count_sent(m);
  context_access::net(ctx_).send(dest, channel_, std::move(m));
}

void exchange_port::send_confirmed(int dest, message_buffer&& m) {
  count_sent(m);
  context_access::net(ctx_).send_confirmed(dest, channel_, std::move(m), confirmations_);
}

bool exchange_port::confirmable(int dest, std::uint64_t bytes) const noexcept {
  return dest != rank_ && bytes <= context_access::net(ctx_).confirmable_bytes();
}

std::uint64_t exchange_port::unconfirmed() const noexcept {
  return confirmations_->pending.load(std::memory_order_acquire);
}

bool exchange_port::confirms_before_hand_over() const noexcept {
  return context_access::net(ctx_).confirms_before_hand_over();
}

bool exchange_port::receive() {
  arrivals_.clear();
  if (!context_access::mail(ctx_).take(channel_, arrivals_)) return false;
  bool any = false;
  for (auto& m : arrivals_) {
    exchange_wire_header h;
    if (m.data.size() < sizeof h)
      corrupt(m.source, "message", concat(m.data.size(), " bytes, shorter than its ", sizeof h, "-byte header"));
    std::memcpy(&h, m.data.payload(), sizeof h);
    check_header(m, h);
    if (h.run == run_) {
      inbox_.push_back(std::move(m));
      any = true;
    } else {
      parked_.push_back(std::move(m));
    }
  }
  return any;
}

// What a receiver can check before it knows which step waits for the message: the run, the kind,
// and the size of what has no records. Records are checked as they are read (read_records).
void exchange_port::check_header(const message& m, const exchange_wire_header& h) const {
  if (h.run < run_ || (h.run > run_ + 1 && !runs_ahead_))
    corrupt(m.source, "message",
            concat("run ", h.run, " during run ", run_,
                   runs_ahead_ ? " (expected this run or a later one)" : " (expected this run or the next)"));
  switch (static_cast<exchange_message_kind>(h.kind)) {
    case exchange_message_kind::data:
    case exchange_message_kind::confirmed:
    case exchange_message_kind::ack:
      if (h.step != 0) corrupt(m.source, "direct message", concat("step ", h.step, " (expected 0)"));
      if (h.kind == static_cast<std::uint16_t>(exchange_message_kind::ack) && m.data.size() != sizeof h)
        corrupt(m.source, "acknowledgement", concat(m.data.size(), " bytes (expected ", sizeof h, ")"));
      return;
    case exchange_message_kind::stage:
    case exchange_message_kind::phase:
      return;
  }
  corrupt(m.source, "message", concat("unknown kind ", h.kind));
}

void exchange_port::corrupt(int source, std::string_view message, std::string_view problem) const {
  corrupt_message(concat("sparse_exchange #", channel_), message, source, problem);
}

void exchange_port::begin_run(std::uint32_t run) {
  run_ = run;
  TRANSIT_ASSERT(inbox_.empty(), "exchange messages left over from the previous run");
  std::size_t kept = 0;
  for (auto& m : parked_) {
    exchange_wire_header h;
    std::memcpy(&h, m.data.payload(), sizeof h);
    if (h.run == run_) {
      inbox_.push_back(std::move(m));
    } else {
      parked_[kept++] = std::move(m);
    }
  }
  parked_.resize(kept);
}

void exchange_port::release() {
  for (auto& b : held_) context_access::net(ctx_).recycle(std::move(b));
  held_.clear();
}

std::string exchange_port::describe() const {
  return concat("run ", run_, ": ", inbox_.size(), " messages unread, ", parked_.size(), " of the next run parked");
}

// ---- exchange_engine ----

exchange_engine::exchange_engine(context& ctx, const exchange_options& options, std::size_t item_bytes)
    : ctx_(ctx),
      grid_(grid_for(ctx, options)),
      item_bytes_(item_bytes),
      requested_(requested_method(ctx, options)),
      fixed_pattern_(options.fixed_pattern),
      port_(ctx, stats_) {
  if (requested_ == exchange_method::automatic) {
    candidates_ = {exchange_method::direct, exchange_method::crystal_router, exchange_method::grid};
    if (context_access::net(ctx).mpi() != nullptr && ctx.options().threads_per_rank == 1) {  // MPI collectives: one PE per rank
#ifdef TRANSIT_WITH_MPI
      candidates_.push_back(exchange_method::mpi_alltoallv);
      candidates_.push_back(exchange_method::mpi_neighbor);
#endif
    }
    last_ = exchange_method::automatic;
    start_choice();
  } else {
    settled_ = true;
    last_ = requested_;
  }
  impls_.resize(std::size(all_methods));
  diagnostic_id_ = context_access::add_diagnostic(ctx_, [this] {
    return concat("sparse_exchange of ", item_bytes_, "-byte items, ", to_string(last_), ", ", port_.describe());
  });
}

exchange_engine::~exchange_engine() {
  context_access::remove_diagnostic(ctx_, diagnostic_id_);
  impls_.clear();  // MPI communicators are freed collectively, in construction order on every PE
}

exchange_method_impl& exchange_engine::impl(exchange_method m) {
  auto& slot = impls_[static_cast<std::size_t>(m)];
  if (!slot) {
    switch (m) {
      case exchange_method::direct: slot = make_direct(port_, fixed_pattern_); break;
      case exchange_method::crystal_router: slot = make_crystal_router(port_); break;
      case exchange_method::grid: slot = make_grid_method(port_, grid_); break;
#ifdef TRANSIT_WITH_MPI
      case exchange_method::mpi_alltoallv: slot = make_mpi_alltoallv(port_, fixed_pattern_); break;
      case exchange_method::mpi_neighbor: slot = make_mpi_neighbor(port_, fixed_pattern_); break;
#else
      case exchange_method::mpi_alltoallv:
      case exchange_method::mpi_neighbor: TRANSIT_ASSERT(false, "MPI methods in a build without MPI"); break;
#endif
      case exchange_method::automatic: TRANSIT_ASSERT(false, "automatic is not a method of its own");
    }
  }
  return *slot;
}

exchange_method exchange_engine::next_method() const {
  if (settled_) return requested_ == exchange_method::automatic ? last_ : requested_;
  return candidates_[selection_->plan()[batch_].candidate];
}

void exchange_engine::run(const outgoing_plan& out, std::vector<incoming_record>& in) {
  trace::recorder* const tracer = context_access::net(ctx_).tracer();
  const std::int64_t traced_start = tracer != nullptr ? trace::recorder::now() : 0;
  if (fixed_pattern_) check_fixed(out);  // before anything is sent or counted
  ++stats_.runs;
  port_.begin_run(static_cast<std::uint32_t>(stats_.runs));
  const exchange_method m = next_method();
  exchange_method_impl& method = impl(m);
  // See exchange_method_impl::uses_transport. Equal on every PE: all ran the same method last.
  if (!method.uses_transport() && last_used_transport_) {
    port_.group().start_barrier();
    context_access::finish_collective(ctx_, port_.group(), "sparse_exchange (transport drained before MPI)");
  }
  if (!settled_ && selection_->plan()[batch_].timed && run_in_batch_ == 0) {
    port_.group().start_barrier();
    context_access::finish_collective(ctx_, port_.group(), "sparse_exchange (automatic timing)");
  }
  std::uint64_t volume = 0;
  for (const auto& r : out.records) volume += r.bytes;
  exchange_run r{out, in, volume};
  const auto start = detail::steady_clock::now();
  const std::uint64_t largest_volume = method.run(r);
  charge_item_hops(in.size());  // modelled simulation: each record handed over here
  const double seconds = detail::seconds_since(start);
  check_arrived(m, in);
  std::sort(in.begin(), in.end(), [](const incoming_record& a, const incoming_record& b) { return a.source < b.source; });
  last_ = m;
  last_used_transport_ = method.uses_transport();
  if (requested_ == exchange_method::automatic) after_automatic_run(largest_volume, seconds);
  if (tracer != nullptr)
    tracer->slice(tracer->label(concat("sparse_exchange run (", to_string(m), ")"), "bytes out", "records in"),
                  traced_start, trace::recorder::now(), volume, in.size());
}

// A local check, O(records): a collective one would cost the messages the promise saves.
void exchange_engine::check_fixed(const outgoing_plan& out) {
  if (stats_.runs == 0) {
    fixed_records_.clear();
    for (const auto& r : out.records) fixed_records_.emplace_back(r.dest, r.bytes);
    return;
  }
  const std::size_t now = out.records.size(), first = fixed_records_.size();
  for (std::size_t i = 0; i < std::max(now, first); ++i) {
    if (i < now && i < first && out.records[i].dest == fixed_records_[i].first &&
        out.records[i].bytes == fixed_records_[i].second)
      continue;
    throw_invalid(concat("sparse_exchange::run with exchange_options::fixed_pattern, PE ", port_.rank(), ", record ", i,
                         " (its parcels to one other PE, by destination)"),
                  i < now ? concat(out.records[i].bytes, " bytes to PE ", out.records[i].dest) : "nothing",
                  i < first ? concat(fixed_records_[i].second, " bytes to PE ", fixed_records_[i].first,
                                     ", as in this PE's first run")
                            : std::string("nothing, as in this PE's first run"));
  }
}

// Every method waits for the messages its steps expect; one still unread when the run ends is of
// a kind or step that no step of this run takes (or one more than a step expects). The typed
// layer copies a record into whole items.
void exchange_engine::check_arrived(exchange_method m, const std::vector<incoming_record>& in) {
  if (!port_.inbox().empty()) {
    const message& left = port_.inbox().front();
    exchange_wire_header h;
    std::memcpy(&h, left.data.payload(), sizeof h);
    port_.corrupt(left.source, "message", concat("kind ", h.kind, ", step ", h.step, " of run ", h.run,
                                                 ", which no step of this run of ", to_string(m), " expects"));
  }
  for (const incoming_record& r : in) {
    if (r.bytes == 0 || r.bytes % item_bytes_ != 0)
      port_.corrupt(r.source, "record",
                    concat(r.bytes, " bytes, not a positive whole number of ", item_bytes_, "-byte items"));
  }
}

void exchange_engine::start_choice() {
  selection_ = std::make_unique<exchange_selection>(candidates_.size());
  settled_ = false;
  start_phase();
}

void exchange_engine::start_phase() {
  batch_ = 0;
  run_in_batch_ = 0;
  batch_seconds_.assign(selection_->plan().size(), 0.0);
}

void exchange_engine::after_automatic_run(std::uint64_t volume, double seconds) {
  if (settled_) {
    // The volume is the same on every PE, so every PE re-chooses at the same run.
    if (volume > volume_change * settled_volume_ || volume * volume_change < settled_volume_) start_choice();
    return;
  }
  const std::vector<trial_batch>& plan = selection_->plan();
  ++(plan[batch_].exploit ? stats_.exploit_runs : stats_.trial_runs);
  if (plan[batch_].timed) batch_seconds_[batch_] += seconds;
  if (++run_in_batch_ < plan[batch_].runs) return;
  run_in_batch_ = 0;
  if (++batch_ < plan.size()) return;
  // gslib's set-up does the same: a method's time is that of its slowest PE.
  port_.group().start_allreduce(batch_seconds_.data(), static_cast<int>(batch_seconds_.size()), scalar_type::f64,
                                reduce_op::max);
  context_access::finish_collective(ctx_, port_.group(), "sparse_exchange (automatic timing)");
  settled_volume_ = volume;
  // Every PE plans and chooses alike from the same reduced times.
  selection_->finish_phase(batch_seconds_);
  if (selection_->decided())
    choose();
  else
    start_phase();
}

void exchange_engine::choose() {
  stats_.candidates.clear();
  for (std::size_t c = 0; c < candidates_.size(); ++c)
    stats_.candidates.push_back(
        exchange_candidate{candidates_[c], selection_->seconds()[c], selection_->raced()[c], selection_->confirmed()[c]});
  last_ = candidates_[selection_->chosen()];
  ++stats_.choices;
  settled_ = true;
}

void exchange_engine::release() { port_.release(); }

}  // namespace detail
}  // namespace transit
