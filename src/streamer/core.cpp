#include "transit/streamer/detail/core.hpp"

#include <algorithm>
#include <cstdio>
#include <limits>
#include <sstream>
#include <stdexcept>

#include "transit/core/error.hpp"

namespace transit::detail {

namespace {

// Above this many unfinished sends (MPI backlog), a top-level insert stops to receive and
// forward until half have gone: memory stays bounded, and the PE never waits without receiving.
constexpr std::size_t max_pending_sends = 64;

virtual_grid grid_for(const context& ctx, const streamer_options& options) {
  if (!options.grid) return virtual_grid::node_pe(ctx.machine());
  if (options.grid->num_pes() != ctx.size())
    throw_invalid("streamer_options.grid", concat(options.grid->str(), " for ", options.grid->num_pes(), " PEs"),
                  concat("a grid for the job's ", ctx.size(), " PEs"));
  return *options.grid;
}

std::uint32_t checked_capacity(const streamer_options& options, std::size_t item_bytes) {
  constexpr std::size_t max_message_bytes = std::size_t{1} << 30;
  if (options.buffer_items == 0) throw_invalid("streamer_options.buffer_items", 0, "at least 1");
  if (options.buffer_items > max_message_bytes / (item_bytes + sizeof(std::int32_t)))
    throw_invalid("streamer_options.buffer_items", options.buffer_items,
                  concat("at most ", max_message_bytes / (item_bytes + sizeof(std::int32_t)),
                         " (messages are limited to 1 GiB)"));
  return static_cast<std::uint32_t>(options.buffer_items);
}

}  // namespace

streamer_core::streamer_core(context& ctx, const streamer_options& options, std::size_t item_bytes,
                             const char* type_name)
    : ctx_(ctx),
      rank_(ctx.rank()),
      size_(ctx.size()),
      item_bytes_(item_bytes),
      capacity_(checked_capacity(options, item_bytes)),
      max_buffered_(options.max_buffered_items),
      router_(make_router(options.route, grid_for(ctx, options), ctx.machine())),
      type_name_(type_name),
      channel_(ctx.mail().open_channel()),
      group_(ctx.net().make_group()),
      flush_period_(options.flush_period),
      last_flush_check_(std::chrono::steady_clock::now()) {
  const int phases = router_->num_phases();
  for (const hop& h : router_->out_links(rank_)) {
    out_index_.emplace(std::int64_t{h.pe} * phases + h.phase, static_cast<int>(links_.size()));
    link l;
    l.pe = h.pe;
    l.phase = h.phase;
    l.last_phase = h.phase == phases - 1;
    links_.push_back(std::move(l));
  }
  route_.resize(size_);
  for (int dest = 0; dest < size_; ++dest) {
    route_[dest] = dest == rank_ ? -1 : link_index_checked(router_->next_hop(rank_, dest, -1));
  }
  for (const hop& h : router_->in_links(rank_)) {
    in_index_.emplace(std::int64_t{h.pe} * phases + h.phase, static_cast<int>(in_links_.size()));
    in_links_.push_back(in_link{h.pe, h.phase});
  }
  diagnostic_id_ = ctx_.add_diagnostic([this] { return describe(); });
}

streamer_core::~streamer_core() {
  ctx_.remove_diagnostic(diagnostic_id_);
  if (buffered_ > 0) {
    std::fprintf(stderr,
                 "transit: PE %d: streamer<%s> destroyed with %llu items still buffered (they are lost; call "
                 "finish() or quiesce() before destroying a streamer)\n",
                 rank_, type_name_, static_cast<unsigned long long>(buffered_));
  }
}

int streamer_core::link_index(int pe, int phase) const {
  const auto it = out_index_.find(std::int64_t{pe} * router_->num_phases() + phase);
  return it == out_index_.end() ? -1 : it->second;
}

int streamer_core::link_index_checked(const hop& h) const {
  const int index = link_index(h.pe, h.phase);
  TRANSIT_ASSERT(index >= 0, "router returned a hop that is not among its out_links");
  return index;
}

void streamer_core::check_destination(int dest) const {
  throw std::out_of_range(concat("streamer::insert: destination PE ", dest, " is outside [0, ", size_,
                                 "): expected a PE of this job"));
}

void streamer_core::check_open() const {
  throw std::logic_error(
      "streamer::insert after done() and before wait() returned: this PE's step is closed; "
      "insert after wait() returns (or use quiesce() when deliveries insert)");
}

void streamer_core::open_buffer(link& l) {
  const std::size_t bytes = buffer_bytes(l);
  l.buffer = ctx_.net().allocate(bytes);
  ++buffers_allocated_;
  buffer_bytes_allocated_ += bytes;
  stats_.buffers_peak = std::max(stats_.buffers_peak, buffers_allocated_);
  stats_.buffer_bytes_peak = std::max(stats_.buffer_bytes_peak, buffer_bytes_allocated_);
}

std::size_t streamer_core::buffer_bytes(const link& l) const noexcept {
  const std::size_t items_end = destinations_offset(capacity_);
  return l.last_phase ? items_end : items_end + capacity_ * sizeof(std::int32_t);
}

void streamer_core::send(link& l, flush_kind kind, bool final_marker) {
  if (!l.buffer) {
    if (!final_marker) return;
    l.buffer = ctx_.net().allocate(sizeof(wire_header));  // a bare final marker
  } else {
    --buffers_allocated_;
    buffer_bytes_allocated_ -= buffer_bytes(l);
  }
  const std::uint32_t n = l.count;
  std::byte* payload = l.buffer.payload();
  std::size_t bytes = sizeof(wire_header) + n * item_bytes_;
  std::uint16_t flags = 0;
  if (!l.last_phase && n > 0) {
    // Close the gap after a partial item array so only used bytes travel (thesis spec 17).
    const std::size_t full = destinations_offset(capacity_), used = destinations_offset(n);
    if (used != full) std::memmove(payload + used, payload + full, n * sizeof(std::int32_t));
    bytes = used + n * sizeof(std::int32_t);
    flags = has_destinations;
  }
  const wire_header header{n, static_cast<std::uint16_t>(l.phase), flags, final_marker ? l.sent + 1 : 0, step_};
  std::memcpy(payload, &header, sizeof header);
  l.buffer.set_size(bytes);
  ctx_.net().send(l.pe, channel_, std::move(l.buffer));
  l.buffer = message_buffer();
  ++l.sent;
  buffered_ -= n;
  l.count = 0;
  ++stats_.messages_sent;
  stats_.bytes_sent += bytes;
  if (n == 0) return;
  switch (kind) {
    case flush_kind::full: ++stats_.flushes_full; break;
    case flush_kind::timer: ++stats_.flushes_timer; break;
    case flush_kind::final: ++stats_.flushes_final; break;
    case flush_kind::bound: ++stats_.flushes_bound; break;
  }
}

void streamer_core::relieve_bound() {
  // Send the fullest buffer: it frees the most room per message (thesis: keep messages large).
  link* fullest = &links_.front();
  for (auto& l : links_) {
    if (l.count > fullest->count) fullest = &l;
  }
  send(*fullest, flush_kind::bound);
}

void streamer_core::flush_links(std::size_t first, std::size_t last, flush_kind kind, bool final_marker) {
  // Start at a rotating position so that PEs flushing together do not all hit the same peer first.
  const std::size_t n = last - first;
  if (n == 0) return;
  const std::size_t start = (static_cast<std::size_t>(rank_) + flush_rotation_++) % n;
  for (std::size_t i = 0; i < n; ++i) send(links_[first + (start + i) % n], kind, final_marker);
}

bool streamer_core::receive() {
  batch_.clear();
  if (!ctx_.mail().take(channel_, batch_)) return false;
  const int phases = router_->num_phases();
  in_callback_ = true;
  try {
    for (auto& m : batch_) {
      wire_header h;
      std::memcpy(&h, m.data.payload(), sizeof h);
      const auto it = in_index_.find(std::int64_t{m.source} * phases + h.phase);
      TRANSIT_ASSERT(it != in_index_.end(), "message on a link the router does not have");
      in_link& il = in_links_[it->second];
      ++il.received;
      if (h.final_count != 0) {
        il.announced = h.final_count;
        il.final_step = h.step;
      }
      ++received_messages_;
      ++stats_.messages_received;
      ++activity_;
      process_items(m.data.payload(), h);
      ctx_.net().recycle(std::move(m.data));
    }
  } catch (...) {
    in_callback_ = false;
    throw;
  }
  in_callback_ = false;
  return true;
}

bool streamer_core::poll_once() {
  bool progressed = receive();
  progressed |= deliver_local();
  maybe_timer_flush();
  return progressed;
}

bool streamer_core::progress_impl() {
  if (in_callback_) return false;  // nested call from a deliver callback: the outer loop polls
  return poll_once();
}

void streamer_core::after_send() {
  if (in_callback_) return;
  receive();
  if (ctx_.net().pending_sends() <= max_pending_sends) return;
  ctx_.wait_until(
      [&] {
        const bool progressed = poll_once();
        if (ctx_.net().pending_sends() <= max_pending_sends / 2) return step_result::done;
        return progressed ? step_result::progressed : step_result::idle;
      },
      "streamer insert (waiting for sends to drain)");
}

void streamer_core::maybe_timer_flush() {
  if (flush_period_.count() == 0) return;
  const auto now = std::chrono::steady_clock::now();
  if (now - last_flush_check_ < flush_period_) return;
  if (activity_ == activity_at_check_ && buffered_ > 0) flush_links(0, links_.size(), flush_kind::timer, false);
  last_flush_check_ = now;
  activity_at_check_ = activity_;
}

bool streamer_core::in_links_complete(int below_phase) const {
  for (const auto& il : in_links_) {
    if (il.phase >= below_phase) break;  // in_links_ are sorted by phase
    if (il.final_step != step_ || il.received != il.announced) return false;
  }
  return true;
}

bool streamer_core::advance_staged() {
  bool progressed = false;
  const int phases = router_->num_phases();
  while (next_final_phase_ < phases && in_links_complete(next_final_phase_)) {
    // links_ are sorted by phase: flush the run of this phase with final markers.
    std::size_t first = 0;
    while (first < links_.size() && links_[first].phase < next_final_phase_) ++first;
    std::size_t last = first;
    while (last < links_.size() && links_[last].phase == next_final_phase_) ++last;
    flush_links(first, last, flush_kind::final, true);
    ++next_final_phase_;
    progressed = true;
  }
  return progressed;
}

void streamer_core::done_impl() {
  if (in_callback_) throw std::logic_error("streamer::done called from a deliver callback");
  if (state_ != step_state::open) throw std::logic_error("streamer::done called twice in one step");
  state_ = step_state::done;
  next_final_phase_ = 0;
  advance_staged();
}

void streamer_core::wait_impl() {
  if (in_callback_) throw std::logic_error("streamer::wait called from a deliver callback");
  if (state_ == step_state::open) done_impl();
  const int phases = router_->num_phases();
  ctx_.wait_until(
      [&] {
        bool progressed = poll_once();
        progressed |= advance_staged();
        if (next_final_phase_ == phases && in_links_complete(phases) && local_pending() == 0)
          return step_result::done;
        return progressed ? step_result::progressed : step_result::idle;
      },
      "streamer wait (staged completion)");
  TRANSIT_ASSERT(buffered_ == 0, "items left in buffers after staged completion");
  // Every item for this PE has arrived; the barrier makes that true everywhere before anyone
  // starts the next step. Meanwhile keep the transport moving (peers may need our receives and
  // our backlog to finish their step) but hold back messages: any that arrive now belong to the
  // next step, and delivering them inside this wait() would mix the steps.
  ++step_;
  group_->start_barrier();
  ctx_.wait_until(
      [&] {
        ctx_.mail().pump();
        return group_->test() ? step_result::done : step_result::idle;
      },
      "streamer wait (final barrier)");
  state_ = step_state::open;
}

void streamer_core::quiesce_impl() {
  if (in_callback_) throw std::logic_error("streamer::quiesce called from a deliver callback");
  if (state_ != step_state::open) throw std::logic_error("streamer::quiesce called after done() in the same step");
  std::uint64_t counts[2] = {0, 0};
  std::uint64_t previous[2] = {~std::uint64_t{0}, 0};
  bool wave_in_flight = false;
  ctx_.wait_until(
      [&] {
        if (wave_in_flight) {
          // Hold back arrivals while a wave is out: if it detects termination, they belong to
          // the next step. Otherwise they are processed right after.
          ctx_.mail().pump();
          if (!group_->test()) return step_result::idle;
          wave_in_flight = false;
          if (counts[0] == counts[1] && counts[0] == previous[0] && counts[1] == previous[1])
            return step_result::done;
          previous[0] = counts[0];
          previous[1] = counts[1];
          return step_result::progressed;
        }
        if (poll_once()) return step_result::progressed;
        // Idle here: send everything buffered, then contribute this PE's counts to a wave.
        flush_links(0, links_.size(), flush_kind::final, false);
        if (local_pending() > 0) return step_result::progressed;
        counts[0] = stats_.messages_sent;
        counts[1] = received_messages_;
        group_->start_allreduce(counts, 2, scalar_type::u64, reduce_op::sum);
        wave_in_flight = true;
        return step_result::progressed;
      },
      "streamer quiesce");
  ++step_;
}

std::string streamer_core::describe() const {
  std::ostringstream out;
  static const char* const states[] = {"open", "done", "completing"};
  out << "streamer<" << type_name_ << "> step " << step_ << ", " << states[static_cast<int>(state_)]
      << ", next final phase " << next_final_phase_ << " of " << router_->num_phases() << ", " << buffered_
      << " items buffered, " << local_pending() << " local items pending";
  for (const auto& l : links_) {
    if (l.count > 0) out << "\n    buffer to PE " << l.pe << " (phase " << l.phase << "): " << l.count << " items";
  }
  for (const auto& il : in_links_) {
    if (il.final_step != step_ || il.received != il.announced) {
      out << "\n    from PE " << il.pe << " (phase " << il.phase << "): " << il.received << " messages received";
      if (il.final_step == step_) {
        out << ", " << il.announced << " announced";
      } else {
        out << ", final count not yet received";
      }
    }
  }
  return out.str();
}

}  // namespace transit::detail
