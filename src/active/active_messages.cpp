#include "transit/active/active_messages.hpp"

#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <new>

#include "call_error.hpp"
#include "core/wire_error.hpp"
#include "transit/detail/core/error.hpp"
#include "transit/detail/runtime/context_access.hpp"

namespace transit {

using detail::context_access;

namespace {

// Buffers of calls up to 16 bytes hold buffer_items items; larger items get the same bytes.
streamer_options options_for(const streamer_options& options, std::size_t item_bytes) {
  streamer_options o = options;
  if (o.buffer_items != 0)  // 0 is the streamer's to interpret (automatic, once calibrated)
    o.buffer_items = std::max<std::size_t>(1, o.buffer_items * 16 / std::max<std::size_t>(item_bytes, 16));
  return o;
}

}  // namespace

namespace {

// A received call whose record fails its checks (call_error.hpp), reported as a corrupt message
// from `source`, the PE the call came from (its last hop on a routed streamer).
[[noreturn]] void corrupt_call(std::string_view message, int source, const detail::call_record_error& e) {
  detail::corrupt_message("active_messages", message, source, e.what());
}

}  // namespace

active_messages::active_messages(context& ctx, streamer_options options)
    : active_messages(ctx, options, false) {}

active_messages::active_messages(context& ctx, streamer_options options, with_callers_t)
    : active_messages(ctx, options, true) {}

active_messages::active_messages(context& ctx, const streamer_options& options, bool callers)
    : ctx_(ctx),
      rank_(ctx.rank()),
      size_(ctx.size()),
      together_(ctx),
      group_(context_access::net(ctx).make_group()),
      callers_(callers) {
  // A PE that fails to read its handler table still joins the comparison, so that no PE waits
  // for it in a collective; its empty table shows as a mismatch on every PE.
  std::exception_ptr local_error;
  try {
    handlers_ = detail::current_handlers();
  } catch (...) {
    local_error = std::current_exception();
    handlers_ = detail::handler_table{};
  }
  check_same_handlers_everywhere();
  if (local_error) std::rethrow_exception(local_error);

  // In class order on every PE (a fold over the comma operator is sequenced left to right).
  [&]<std::size_t... I>(std::index_sequence<I...>) {
    (make_call_streamer<I>(ctx, options, callers), ...);
  }(std::make_index_sequence<detail::num_call_classes>());
  chunks_.emplace(ctx, options_for(options, detail::chunk_bytes),
                  [this](const detail::chunk_cell& cell) {
                    try {
                      receive_chunk(cell);
                    } catch (const detail::call_record_error& e) {
                      corrupt_call("chunked call", detail::streamer_group::delivering_from(*chunks_), e);
                    }
                  });
  together_.add(*chunks_);
  large_.emplace(*this);
  together_.add_endpoint(*large_);
}

template <std::size_t I>
void active_messages::make_call_streamer(context& ctx, const streamer_options& options, bool callers) {
  static constexpr std::size_t bytes = detail::call_classes[I];
  using cell = detail::call_cell<bytes>;
  auto& slot = std::get<I>(calls_);
  const auto run = [this, &slot](const cell* items, std::uint32_t& cursor, std::uint32_t n) {
    try {
      dispatch_items(items, cursor, n);
    } catch (const detail::call_record_error& e) {
      corrupt_call(detail::concat("call of ", bytes, " bytes"), detail::streamer_group::delivering_from(*slot), e);
    }
  };
  if (callers) {
    slot.emplace(ctx, options_for(options, bytes),
                 detail::batch_deliver{[this, run](const cell* items, const std::int32_t* sources, int source,
                                                   std::uint32_t& cursor, std::uint32_t n) {
                   with_caller(sources, source, [&] { run(items, cursor, n); });
                 }});
  } else {
    slot.emplace(ctx, options_for(options, bytes), detail::batch_deliver{run});
  }
  together_.add(*slot);
}

template <class F>
void active_messages::with_caller(const std::int32_t* sources, int source, F&& f) {
  // Saved and restored: a handler's own progress runs no handler, but a failed call must not
  // leave caller() answering for it.
  const std::int32_t* const saved_sources = std::exchange(caller_sources_, sources);
  const int saved_source = std::exchange(caller_source_, source);
  const std::uint32_t saved_index = call_index_;
  struct restore {
    active_messages& am;
    const std::int32_t* sources;
    int source;
    std::uint32_t index;
    ~restore() {
      am.caller_sources_ = sources;
      am.caller_source_ = source;
      am.call_index_ = index;
    }
  } guard{*this, saved_sources, saved_source, saved_index};
  std::forward<F>(f)();
}

void active_messages::dispatch_from(int source, const std::byte* record, std::size_t bytes) {
  if (callers_) {
    with_caller(nullptr, source, [&] { dispatch(record, bytes); });
  } else {
    dispatch(record, bytes);
  }
}

void active_messages::throw_no_caller() const {
  throw std::logic_error(callers_ ? "active_messages::caller called outside a handler: it names the PE that made the "
                                    "running call"
                                  : "active_messages::caller needs an object constructed with "
                                    "active_messages::with_callers (its routed calls then carry their callers)");
}

active_messages::~active_messages() {
  const std::uint64_t since = stats().items_inserted - inserted_at_barrier_;
  if (since == 0 || std::uncaught_exceptions() > 0) return;
  context_access::end_job(ctx_, detail::concat("active_messages destroyed with ", since,
                                               " calls (or chunks of calls) made on this PE since its last barrier(): "
                                               "they may never run; call barrier() on every PE before the object "
                                               "goes away"));
}

void active_messages::check_same_handlers_everywhere() {
  const auto count = static_cast<std::uint64_t>(handlers_.invoke.size());
  std::uint64_t extremes[4] = {handlers_.signature, ~handlers_.signature, count, ~count};
  group_->start_allreduce(extremes, 4, detail::scalar_type::u64, reduce_op::max);
  context_access::finish_collective(ctx_, *group_, "active_messages construction (same handlers on every PE)");
  if (extremes[0] == ~extremes[1]) return;
  throw std::logic_error(detail::concat(
      "active_messages: the PEs' handler tables differ (", ~extremes[3], " to ", extremes[2],
      " handlers; this PE has ", count, ", signature 0x", std::hex, handlers_.signature, std::dec,
      "): every PE must run the same executable, with the same libraries loaded before an active_messages is "
      "constructed"));
}

void active_messages::barrier() {
  if (!later_errors_.empty()) rethrow_later_error();
  if (together_.in_callback())
    throw std::logic_error(
        "active_messages::barrier called from a handler: barrier is collective; a handler may call async, "
        "async_broadcast and progress");
  together_.quiesce("active_messages barrier");
  TRANSIT_ASSERT(partial_.empty(), "a chunked call is incomplete after quiescence");
  inserted_at_barrier_ = stats().items_inserted;
}

bool active_messages::progress() {
  if (!later_errors_.empty()) rethrow_later_error();
  return together_.progress();  // false from a handler: the loop that runs it polls
}

streamer_stats active_messages::stats() const {
  streamer_stats total;
  std::apply([&](const auto&... s) { ((total += s->stats()), ...); }, calls_);
  total += chunks_->stats();
  // A large call is one item and one message of its own.
  total.items_inserted += large_->messages_sent();
  total.messages_sent += large_->messages_sent();
  total.bytes_sent += large_->bytes_sent();
  total.items_delivered += large_->messages_received();
  total.messages_received += large_->messages_received();
  return total;
}

active_messages::large_calls::large_calls(active_messages& am)
    : am_(am), channel_(context_access::mail(am.ctx_).open_channel()) {}

active_messages::large_calls::~large_calls() {
  // After a barrier nothing is queued; while an exception unwinds, what is left goes with the job.
  context_access::mail(am_.ctx_).close_channel(channel_);
  for (auto& m : arrived_) context_access::net(am_.ctx_).recycle(std::move(m.data));
}

detail::message_buffer active_messages::large_calls::allocate(std::size_t record_bytes) {
  return context_access::net(am_.ctx_).allocate(detail::large_header_bytes + record_bytes);
}

void active_messages::large_calls::send(int dest, detail::message_buffer&& message, std::size_t record_bytes) {
  const detail::large_call_header header{record_bytes, am_.together_.steps_ended(), 0};
  std::memcpy(message.payload(), &header, sizeof header);
  message.set_size(detail::large_header_bytes + record_bytes);
  bytes_sent_ += message.size();
  ++sent_;  // counted before the send, like a streamer's messages: never received before sent
  context_access::net(am_.ctx_).send(dest, channel_, std::move(message));
}

detail::large_call_header active_messages::large_calls::checked_header(const detail::message& m) const {
  detail::large_call_header h{};
  const std::size_t size = m.data.size();
  if (size >= detail::large_header_bytes) std::memcpy(&h, m.data.payload(), sizeof h);
  const std::uint32_t step = am_.together_.steps_ended();
  if (size < detail::large_header_bytes || h.record_bytes != size - detail::large_header_bytes ||
      h.record_bytes < detail::large_call_bytes || (h.step != step && h.step != step + 1))
    detail::corrupt_message("active_messages", "large call", m.source,
                            detail::concat(size, " bytes, record of ", h.record_bytes, ", barrier ", h.step,
                                           " where this PE is at ", step));
  return h;
}

bool active_messages::large_calls::poll_queued() {
  context_access::mail(am_.ctx_).take_queued(channel_, arrived_);
  const std::uint32_t step = am_.together_.steps_ended();
  bool handled = false;
  while (next_ < arrived_.size()) {
    detail::message& m = arrived_[next_];
    detail::large_call_header h;
    try {
      h = checked_header(m);
    } catch (...) {
      context_access::net(am_.ctx_).recycle(std::move(m.data));  // a corrupt message is dropped whole
      ++next_;
      throw;
    }
    if (h.step != step) {  // the next step's: the sender has left this barrier, this PE has not
      if (held_ != next_) arrived_[held_] = std::move(m);
      ++held_;
      ++next_;
      continue;
    }
    detail::message_buffer data = std::move(m.data);  // freed even if the handler throws
    ++next_;
    ++received_;  // the call counts as handled once its handler starts (as a streamer's items do)
    handled = true;
    {
      const detail::flag_guard running(in_callback_);
      try {
        am_.dispatch_from(m.source, data.payload() + detail::large_header_bytes,
                          static_cast<std::size_t>(h.record_bytes));
      } catch (const detail::call_record_error& e) {
        corrupt_call("large call", m.source, e);
      }
    }
    context_access::net(am_.ctx_).recycle(std::move(data));
  }
  // Held calls are looked at again by the next poll: the barrier may have ended by then.
  arrived_.resize(held_);
  held_ = next_ = 0;
  return handled;
}

void active_messages::receive_chunk(const detail::chunk_cell& cell) {
  const detail::chunk_header& h = cell.header;
  if (h.total <= detail::largest_call || h.offset >= h.total || h.offset % detail::chunk_data_bytes != 0 ||
      h.source >= static_cast<std::uint32_t>(size_))
    throw detail::call_record_error(detail::concat("chunk of a record of ", h.total, " bytes at offset ", h.offset,
                                                   " from PE ", h.source, " of ", size_));
  const std::size_t n = static_cast<std::size_t>(std::min<std::uint64_t>(detail::chunk_data_bytes, h.total - h.offset));
  if (h.offset == 0 && n == h.total) {  // the whole record in one chunk: read in place
    dispatch_from(static_cast<int>(h.source), cell.data, n);
    return;
  }
  const std::uint64_t key = std::uint64_t{h.source} << 32 | h.sequence;
  auto it = partial_.find(key);
  if (h.offset == 0) {
    TRANSIT_ASSERT(it == partial_.end(), "two chunked calls with one (source, sequence) in flight");
    const std::size_t rounded = (static_cast<std::size_t>(h.total) + 63) / 64 * 64;
    auto* memory = static_cast<std::byte*>(std::aligned_alloc(64, rounded));
    if (memory == nullptr) throw std::bad_alloc();
    it = partial_.emplace(key, partial_record{{memory, std::free}, 0}).first;
  } else if (it == partial_.end() || it->second.received != h.offset) {
    // The streamer delivers the items of one route in order; anything else is a broken invariant.
    throw detail::call_record_error(detail::concat("chunk at offset ", h.offset, " of a call from PE ", h.source,
                                                   " out of order (", it == partial_.end() ? 0 : it->second.received,
                                                   " bytes received)"));
  }
  std::memcpy(it->second.data.get() + h.offset, cell.data, n);
  it->second.received += n;
  if (it->second.received == h.total) {
    const auto record = std::move(it->second.data);
    partial_.erase(it);
    dispatch_from(static_cast<int>(h.source), record.get(), static_cast<std::size_t>(h.total));
  }
}

void active_messages::rethrow_later_error() {
  const std::exception_ptr error = later_errors_.front();
  later_errors_.erase(later_errors_.begin());
  std::rethrow_exception(error);
}

void active_messages::refresh_handlers(std::uint32_t id) {
  handlers_ = detail::current_handlers();
  if (id < handlers_.invoke.size()) return;
  throw detail::call_record_error(detail::concat("handler id ", id, ", but PE ", rank_, " knows ",
                                                 handlers_.invoke.size(), " handlers (or code loaded on the sender only)"));
}

void active_messages::throw_bad_destination(int dest) const {
  throw std::out_of_range(detail::concat("active_messages::async: destination PE ", dest, " is outside [0, ", size_,
                                         "): expected a PE of this job"));
}

void active_messages::throw_unknown_handler(const detail::handler_entry& entry) {
  throw std::logic_error(detail::concat("active_messages::async: handler ", entry.name,
                                        " has no id yet: its code was loaded after the last active_messages was "
                                        "constructed; construct active_messages after loading it"));
}

}  // namespace transit
