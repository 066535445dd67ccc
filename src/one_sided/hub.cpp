#include "hub.hpp"

#include <algorithm>
#include <atomic>
#include <cstring>
#include <sstream>

#include "transit/detail/core/clock.hpp"
#include "transit/detail/core/error.hpp"
#include "core/wire_error.hpp"

namespace transit::detail {

namespace {

// Requests for one word meet in a buffer; words of owners' blocks up to 2^40 elements combine.
constexpr std::uint64_t max_combined_offset = std::uint64_t{1} << 40;

enum combine_kind : std::uint8_t { not_combinable = 0, combine_sum = 1, combine_min = 2, combine_max = 3 };

std::uint8_t combine_kind_of(const request_record& r, const element_ops* ops) {
  if (ops == nullptr || !ops->combinable || r.offset >= max_combined_offset) return not_combinable;
  if (r.op == op_code::fetch_add) return combine_sum;
  if (r.op != op_code::accumulate || r.count != 1) return not_combinable;
  switch (static_cast<reduce_op>(r.reduce)) {
    case reduce_op::sum: return combine_sum;
    case reduce_op::min: return combine_min;
    case reduce_op::max: return combine_max;
  }
  return not_combinable;
}

reduce_op reduce_of(std::uint8_t kind) {
  return kind == combine_min ? reduce_op::min : kind == combine_max ? reduce_op::max : reduce_op::sum;
}

std::uint64_t word_key(std::int32_t owner, std::uint64_t offset) {
  return (static_cast<std::uint64_t>(owner) << 40) | offset;
}

template <class Word>
void copy_words(std::byte* to, const std::byte* from, std::size_t count, bool into_block) noexcept {
  for (std::size_t i = 0; i < count; ++i) {
    Word w;
    if (into_block) {
      std::memcpy(&w, from + i * sizeof(Word), sizeof(Word));
      // Release and acquire (plain moves on x86): a put seen by a get publishes the puts before it,
      // so a flag written after its data and polled with get orders them, inside a node too.
      std::atomic_ref<Word>(*reinterpret_cast<Word*>(to + i * sizeof(Word))).store(w, std::memory_order_release);
    } else {
      w = std::atomic_ref<Word>(*const_cast<Word*>(reinterpret_cast<const Word*>(from + i * sizeof(Word))))
              .load(std::memory_order_acquire);
      std::memcpy(to + i * sizeof(Word), &w, sizeof(Word));
    }
  }
}

void copy_elements(std::byte* to, const std::byte* from, std::size_t count, std::size_t size, bool atomic,
                   bool into_block) noexcept {
  if (atomic) {
    switch (size) {
      case 1: return copy_words<std::uint8_t>(to, from, count, into_block);
      case 2: return copy_words<std::uint16_t>(to, from, count, into_block);
      case 4: return copy_words<std::uint32_t>(to, from, count, into_block);
      case 8: return copy_words<std::uint64_t>(to, from, count, into_block);
      default: break;
    }
  }
  std::memcpy(to, from, count * size);
}

}  // namespace

void copy_into_block(std::byte* block, const std::byte* from, std::size_t count, std::size_t size, bool atomic) noexcept {
  copy_elements(block, from, count, size, atomic, true);
}

void copy_from_block(std::byte* to, const std::byte* block, std::size_t count, std::size_t size, bool atomic) noexcept {
  copy_elements(to, block, count, size, atomic, false);
}

std::size_t apply_packed(const request_record& r, const std::byte* payload, std::byte* block, std::byte* out,
                         std::size_t element_size, bool atomic) noexcept {
  const std::byte* data = payload + std::size_t{r.count} * sizeof(packed_region);
  std::size_t moved = 0;
  for (std::uint32_t i = 0; i < r.count; ++i) {
    packed_region region;
    std::memcpy(&region, payload + i * sizeof(packed_region), sizeof region);
    std::byte* at = block + region.offset * element_size;
    const auto count = static_cast<std::size_t>(region.count);
    if (r.op == op_code::put_packed) {
      copy_into_block(at, data + moved, count, element_size, atomic);
    } else {
      copy_from_block(out + moved, at, count, element_size, atomic);
    }
    moved += count * element_size;
  }
  return moved;
}

void add_hub_counters(one_sided_stats& s, const hub_counters& c) noexcept {
  s.requests_forwarded = c.requests_forwarded;
  s.requests_combined = c.requests_combined;
  s.requests_served = c.requests_served;
  s.messages_sent = c.messages_sent;
  s.request_messages_sent = c.request_messages_sent;
  s.request_messages_between_nodes = c.request_messages_between_nodes;
  s.request_messages_received = c.request_messages_received;
  s.credit_waits = c.credit_waits;
  s.replies_forwarded = c.replies_forwarded;
  s.reply_peers = c.reply_peers;
  s.request_buffer_bytes_peak = c.buffer_bytes_peak;
}

hub::hub(config c, transport& net, mailbox* mail, std::uint32_t channel, host& h)
    : config_(std::move(c)), net_(net), mail_(mail), channel_(channel), host_(h), element_size_(config_.element_size) {
  TRANSIT_ASSERT(config_.buffer_bytes >= sizeof(message_header) + sizeof(request_record) + 8,
                 "request buffers hold at least one request");
  TRANSIT_ASSERT(config_.links_between_nodes.size() == config_.links.size(), "every link says where it goes");
  TRANSIT_ASSERT(config_.reply_via.size() == config_.endpoint_of.size(), "every requesting PE has a reply route");
  links_ = std::vector<link>(config_.links.size());
  for (std::size_t i = 0; i < links_.size(); ++i) {
    links_[i].endpoint = config_.links[i];
    links_[i].between_nodes = config_.links_between_nodes[i];
    TRANSIT_ASSERT(link_of_.emplace(links_[i].endpoint, i).second, "one link per next-hop endpoint");
  }
  int endpoints = 0;
  for (const int e : config_.endpoint_of) endpoints = std::max(endpoints, e + 1);
  for (const int e : config_.reply_via) endpoints = std::max(endpoints, e + 1);
  for (const auto& l : links_) endpoints = std::max(endpoints, l.endpoint + 1);
  control_.resize(static_cast<std::size_t>(std::max(endpoints, config_.self + 1)));
  replied_to_.resize(control_.size());
  largest_message_ = config_.buffer_bytes;
}

hub::~hub() = default;

std::uint64_t hub::buffer_bound() const noexcept {
  return (links_.size() + config_.in_links * static_cast<std::size_t>(link_credits)) * largest_message_;
}

bool hub::idle() const noexcept {
  return open_buffers_ == 0 && busy_.empty() && combined_live_ == 0 && control_dirty_.empty() && acks_.empty() &&
         lock_waiters_.empty();
}

void hub::hold_bytes(std::int64_t delta) noexcept {
  counters_.buffer_bytes = static_cast<std::uint64_t>(static_cast<std::int64_t>(counters_.buffer_bytes) + delta);
  counters_.buffer_bytes_peak = std::max(counters_.buffer_bytes_peak, counters_.buffer_bytes);
}

// ---- requests ----

bool hub::submit(const request_record& r, const std::byte* payload) {
  const bool accepted = route_or_serve(r, payload);
  if (!control_dirty_.empty() || !acks_.empty()) flush_control();
  return accepted;
}

bool hub::route_or_serve(const request_record& r, const std::byte* payload) {
  const std::int32_t next = config_.route[static_cast<std::size_t>(r.owner)];
  if (next < 0) {
    serve(r, payload);
    return true;
  }
  return append(static_cast<std::size_t>(next), r, payload);
}

void hub::open_buffer(link& l, std::size_t bytes) {
  l.buffer = net_.allocate(bytes);
  l.capacity = bytes;
  l.used = sizeof(message_header);
  l.records = 0;
  l.opened = steady_clock::now();
  ++open_buffers_;
  largest_message_ = std::max(largest_message_, bytes);
  hold_bytes(static_cast<std::int64_t>(bytes));
}

bool hub::append(std::size_t link_index, const request_record& r, const std::byte* payload) {
  link& l = links_[link_index];
  if (l.buffer && config_.combine && try_combine(l, r, payload)) return true;
  const std::size_t need = sizeof(request_record) + padded(r.payload_bytes);
  if (l.buffer && l.used + need > l.capacity && !send_link(l)) return false;
  // A packed request larger than a buffer (routed_engine::max_packed_bytes) gets a message of its
  // own size, in its place in the link's order and under the same credits.
  if (!l.buffer) open_buffer(l, std::max(config_.buffer_bytes, sizeof(message_header) + need));
  std::byte* at = l.buffer.payload() + l.used;
  std::memcpy(at, &r, sizeof r);
  if (r.payload_bytes > 0) std::memcpy(at + sizeof r, payload, r.payload_bytes);
  if (config_.combine) note_for_combining(l, r, static_cast<std::uint32_t>(l.used));
  l.used += need;
  ++l.records;
  hops_.add();
  if (l.capacity > config_.buffer_bytes) send_link(l);  // full; without credit it waits as any full buffer
  return true;
}

// The combining window of a word in a buffer lasts while its latest request there is combinable;
// any other operation on the word closes it, so a merge never moves a request past another.
void hub::note_for_combining(link& l, const request_record& r, std::uint32_t offset) {
  const std::uint8_t kind = combine_kind_of(r, config_.ops);
  if (kind != not_combinable) {
    l.combinable[word_key(r.owner, r.offset)] = combine_entry{offset, kind};
    return;
  }
  if (l.combinable.empty()) return;
  if (r.op == op_code::put_packed || r.op == op_code::get_packed) {  // words anywhere in the block
    l.combinable.clear();
    return;
  }
  if (r.count <= 8 && r.offset + r.count <= max_combined_offset) {
    for (std::uint64_t i = 0; i < r.count; ++i) l.combinable.erase(word_key(r.owner, r.offset + i));
  } else {
    l.combinable.clear();
  }
}

bool hub::try_combine(link& l, const request_record& r, const std::byte* payload) {
  const std::uint8_t kind = combine_kind_of(r, config_.ops);
  if (kind == not_combinable) return false;
  const auto it = l.combinable.find(word_key(r.owner, r.offset));
  if (it == l.combinable.end() || it->second.kind != kind) return false;
  auto* earlier = reinterpret_cast<request_record*>(l.buffer.payload() + it->second.offset);
  std::byte* total = l.buffer.payload() + it->second.offset + sizeof(request_record);
  std::uint32_t id = 0;
  if (earlier->requester == config_.self_requester && earlier->ticket != no_ticket &&
      (earlier->ticket & combined_ticket) != 0) {
    id = earlier->ticket & ~combined_ticket;  // already combined here: add a constituent
  } else {
    if (free_combined_.empty()) {
      TRANSIT_ASSERT(combined_.size() < combined_ticket, "combined request ids fit in 31 bits");
      free_combined_.push_back(static_cast<std::uint32_t>(combined_.size()));
      combined_.emplace_back();
    }
    id = free_combined_.back();
    free_combined_.pop_back();
    ++combined_live_;
    combined& c = combined_[id];
    c.kind = kind;
    c.parts.clear();
    c.parts.push_back(constituent{earlier->requester, earlier->ticket, earlier->op == op_code::fetch_add, 0});
    earlier->requester = config_.self_requester;
    earlier->ticket = combined_ticket | id;
    if (kind == combine_sum) earlier->op = op_code::fetch_add;  // the reply splits into old values
  }
  constituent part{r.requester, r.ticket, r.op == op_code::fetch_add, 0};
  if (kind == combine_sum) std::memcpy(&part.prefix, total, element_size_);
  combined_[id].parts.push_back(part);
  config_.ops->combine(total, payload, reduce_of(kind));
  ++counters_.requests_combined;
  return true;
}

bool hub::send_link(link& l) {
  if (l.credits == 0) {
    if (!l.waiting) ++counters_.credit_waits;
    l.waiting = true;
    return false;
  }
  const message_header h{message_kind::requests, 0, 0, l.records};
  std::memcpy(l.buffer.payload(), &h, sizeof h);
  l.buffer.set_size(l.used);
  hops_.charge();  // the records' work comes before the message leaves
  net_.send(l.endpoint, channel_, std::move(l.buffer));
  l.buffer = message_buffer();
  hold_bytes(-static_cast<std::int64_t>(l.capacity));  // now the receiver's to hold
  l.capacity = 0;
  l.used = 0;
  l.records = 0;
  --l.credits;
  l.waiting = false;
  l.combinable.clear();
  --open_buffers_;
  ++counters_.messages_sent;
  ++counters_.request_messages_sent;
  if (l.between_nodes) ++counters_.request_messages_between_nodes;
  return true;
}

void hub::flush_all() {
  if (open_buffers_ == 0) return;
  for (auto& l : links_) {
    if (l.buffer) send_link(l);
  }
}

void hub::flush_due(steady_clock::time_point now) {
  for (auto& l : links_) {
    if (l.buffer && now - l.opened >= config_.flush_period) send_link(l);
  }
}

// ---- serving ----

void hub::serve(const request_record& r, const std::byte* payload) {
  ++counters_.requests_served;
  hops_.add();
  if (r.op == op_code::lock || r.op == op_code::unlock) {
    serve_mutex(r);
    return;
  }
  std::byte* word = host_.block_of(r.owner) + r.offset * element_size_;
  const std::size_t bytes = std::size_t{r.count} * element_size_;
  std::byte result[16];
  switch (r.op) {
    case op_code::put:
      copy_into_block(word, payload, r.count, element_size_, config_.atomic);
      break;
    case op_code::get:
      if (config_.atomic) {  // read word by word into scratch, then reply from there
        scratch_.resize(bytes);
        copy_from_block(scratch_.data(), word, r.count, element_size_, true);
        reply(r.requester, r.ticket, scratch_.data(), bytes);
      } else {
        reply(r.requester, r.ticket, word, bytes);
      }
      return;
    case op_code::accumulate:
      config_.ops->accumulate(word, payload, r.count, static_cast<reduce_op>(r.reduce), config_.atomic);
      break;
    case op_code::fetch_add:
      config_.ops->fetch_add(word, payload, result, config_.atomic);
      reply(r.requester, r.ticket, result, element_size_);
      return;
    case op_code::compare_exchange:
      config_.ops->compare_exchange(word, payload, result, config_.atomic);
      reply(r.requester, r.ticket, result, element_size_);
      return;
    case op_code::put_packed:
      apply_packed(r, payload, host_.block_of(r.owner), nullptr, element_size_, config_.atomic);
      break;
    case op_code::get_packed: {
      std::size_t total = 0;
      for (std::uint32_t i = 0; i < r.count; ++i) {
        packed_region region;
        std::memcpy(&region, payload + i * sizeof(packed_region), sizeof region);
        total += static_cast<std::size_t>(region.count) * element_size_;
      }
      scratch_.resize(total);
      apply_packed(r, payload, host_.block_of(r.owner), scratch_.data(), element_size_, config_.atomic);
      reply(r.requester, r.ticket, scratch_.data(), total);
      return;
    }
    case op_code::lock:
    case op_code::unlock:
      break;
  }
  if (r.ticket == no_ticket) {
    acknowledge(r.requester, 1);
  } else {
    reply(r.requester, r.ticket, nullptr, 0);
  }
}

std::uint64_t take_ticket(std::byte* mutex) noexcept {
  return std::atomic_ref<std::uint64_t>(*reinterpret_cast<std::uint64_t*>(mutex)).fetch_add(1, std::memory_order_relaxed);
}

bool now_serving(const std::byte* mutex, std::uint64_t ticket) noexcept {
  auto* serving = const_cast<std::uint64_t*>(reinterpret_cast<const std::uint64_t*>(mutex)) + 1;
  return std::atomic_ref<std::uint64_t>(*serving).load(std::memory_order_acquire) == ticket;
}

void release_mutex(std::byte* mutex) noexcept {
  std::atomic_ref<std::uint64_t>(*(reinterpret_cast<std::uint64_t*>(mutex) + 1)).fetch_add(1, std::memory_order_release);
}

std::uint64_t mutex_operations(const std::byte* mutexes, std::size_t count) noexcept {
  std::uint64_t total = 0;
  auto* words = const_cast<std::uint64_t*>(reinterpret_cast<const std::uint64_t*>(mutexes));
  for (std::size_t i = 0; i < 2 * count; ++i) total += std::atomic_ref<std::uint64_t>(words[i]).load(std::memory_order_relaxed);
  return total;
}

// A lock request takes the next ticket of the mutex's ticket lock on its requester's behalf and is
// granted (a reply) when that ticket is served: arrival order, shared with the PEs of the home's
// node that take tickets themselves. An unlock releases it to the next ticket.
void hub::serve_mutex(const request_record& r) {
  std::byte* mutex = host_.block_of(r.owner) + r.offset * mutex_bytes;
  const std::uint64_t key = word_key(r.owner, r.offset);
  if (r.op == op_code::lock) {
    lock_waiters_.push_back(mutex_waiter{mutex, take_ticket(mutex), r.requester, r.ticket, key});
    grant_waiting_locks();
    return;
  }
  // Checked at the requester: only a message from the wire can get here otherwise. A PE's
  // requests to one owner take one route, so its unlock reaches the endpoint that granted it.
  const auto holder = lock_holders_.find(key);
  if (holder == lock_holders_.end() || holder->second != r.requester)
    corrupt_message(receiver(), "unlock request", r.requester,
                    concat("mutex ", r.offset, " of PE ", r.owner, " was not granted to PE ", r.requester, " here"));
  lock_holders_.erase(holder);
  release_mutex(mutex);
  acknowledge(r.requester, 1);
  grant_waiting_locks();
}

bool hub::grant_waiting_locks() {
  bool granted = false;
  for (std::size_t i = 0; i < lock_waiters_.size();) {
    const mutex_waiter w = lock_waiters_[i];
    if (!now_serving(w.mutex, w.ticket)) {
      ++i;
      continue;
    }
    lock_waiters_.erase(lock_waiters_.begin() + static_cast<std::ptrdiff_t>(i));
    lock_holders_[w.key] = w.requester;
    reply(w.requester, w.reply_ticket, nullptr, 0);
    granted = true;
  }
  return granted;
}

void hub::reply(std::int32_t pe, std::uint32_t ticket, const std::byte* data, std::size_t bytes) {
  hops_.add();
  if (config_.reply_via[static_cast<std::size_t>(pe)] == config_.self) {
    if (ticket != no_ticket && (ticket & combined_ticket) != 0) {
      complete_combined(ticket, data, bytes);
    } else {
      host_.deliver_reply(pe, ticket, data, bytes);
    }
    return;
  }
  control_record* c = reply_slot(pe, bytes);
  *c = control_record{control_type::reply, 0, 0, static_cast<std::uint32_t>(bytes), pe, ticket};
  if (bytes > 0) std::memcpy(c + 1, data, bytes);
}

void hub::acknowledge(std::int32_t pe, std::uint64_t count) { acks_[pe] += count; }

// The reply to a combined request: each constituent gets the value it would have seen had the
// requests been applied one by one in the order they were merged.
void hub::complete_combined(std::uint32_t ticket, const std::byte* data, std::size_t bytes) {
  const std::uint32_t id = ticket & ~combined_ticket;
  TRANSIT_ASSERT(id < combined_.size() && !combined_[id].parts.empty(), "reply for a live combined request");
  combined c = std::move(combined_[id]);
  combined_[id].parts.clear();
  free_combined_.push_back(id);
  --combined_live_;
  for (const constituent& part : c.parts) {
    if (c.kind == combine_sum && part.wants_value) {
      TRANSIT_ASSERT(bytes == element_size_, "a combined sum replies with the old value");
      std::byte value[16];
      std::memcpy(value, data, element_size_);
      config_.ops->combine(value, reinterpret_cast<const std::byte*>(&part.prefix), reduce_op::sum);
      reply(part.requester, part.ticket, value, element_size_);
    } else if (part.ticket == no_ticket) {
      acknowledge(part.requester, 1);
    } else {
      reply(part.requester, part.ticket, nullptr, 0);
    }
  }
}

// ---- control messages: replies, acknowledgements, credits ----

// Replies go back hop by hop (engine.hpp): each endpoint sends them only to the endpoints its
// requests came in from, one control message per endpoint per flush however many requesters
// lie beyond it, as requests were aggregated per next hop on the way in.
control_record* hub::reply_slot(std::int32_t pe, std::size_t payload_bytes) {
  const int endpoint = config_.reply_via[static_cast<std::size_t>(pe)];
  TRANSIT_ASSERT(endpoint >= 0 && endpoint != config_.self, "a reply leaving here has a next endpoint");
  if (!replied_to_[static_cast<std::size_t>(endpoint)]) {
    replied_to_[static_cast<std::size_t>(endpoint)] = true;
    ++counters_.reply_peers;
  }
  return control_slot(endpoint, payload_bytes);
}

control_record* hub::control_slot(int endpoint, std::size_t payload_bytes) {
  message_buffer& b = control_[static_cast<std::size_t>(endpoint)];
  const std::size_t need = sizeof(control_record) + padded(payload_bytes);
  if (b && b.size() + need > b.capacity()) {
    net_.send(endpoint, channel_, std::move(b));
    b = message_buffer();
    ++counters_.messages_sent;
  }
  if (!b) {
    b = net_.allocate(std::max(config_.buffer_bytes, sizeof(message_header) + need));
    const message_header h{message_kind::control, 0, 0, 0};
    std::memcpy(b.payload(), &h, sizeof h);
    b.set_size(sizeof h);
    control_dirty_.push_back(endpoint);
  }
  message_header h;
  std::memcpy(&h, b.payload(), sizeof h);
  ++h.records;
  std::memcpy(b.payload(), &h, sizeof h);
  auto* slot = reinterpret_cast<control_record*>(b.payload() + b.size());
  b.set_size(b.size() + need);
  return slot;
}

void hub::flush_control() {
  for (const auto& [pe, count] : acks_) {
    if (config_.reply_via[static_cast<std::size_t>(pe)] == config_.self) {
      host_.deliver_acks(pe, count);
      continue;
    }
    // A record counts up to 2^32 - 1: forwarded counts add up.
    for (std::uint64_t left = count; left > 0;) {
      const auto part = static_cast<std::uint32_t>(std::min<std::uint64_t>(left, 0xffffffffu));
      *reply_slot(pe, 0) = control_record{control_type::acks, 0, 0, 0, pe, part};
      left -= part;
    }
  }
  acks_.clear();
  for (const int endpoint : control_dirty_) {
    message_buffer& b = control_[static_cast<std::size_t>(endpoint)];
    if (!b) continue;
    net_.send(endpoint, channel_, std::move(b));
    b = message_buffer();
    ++counters_.messages_sent;
  }
  control_dirty_.clear();
}

// ---- checks of received messages ----

void hub::corrupt(int source, std::string_view message, std::string_view problem) const {
  const auto& pes = config_.pe_of_endpoint;
  const int pe = source >= 0 && static_cast<std::size_t>(source) < pes.size() ? pes[static_cast<std::size_t>(source)] : source;
  corrupt_message(receiver(), message, pe, problem);
}

std::string hub::receiver() const {
  // A PE's hub (polling) takes its messages from the PE's mailbox; a node helper's hub owns a
  // transport of its own.
  return concat("one-sided hub of ", mail_ != nullptr ? "PE " : "node ", config_.self);
}

void hub::check_requests(int source, const message_buffer& m) const {
  message_header h;
  std::memcpy(&h, m.payload(), sizeof h);
  std::size_t at = sizeof h;
  std::uint32_t n = 0;
  for (; at < m.size(); ++n) {
    const std::size_t left = m.size() - at;
    if (left < sizeof(request_record))
      corrupt(source, "request message", concat("request ", n, " cut off (", left, " bytes left)"));
    request_record r;
    std::memcpy(&r, m.payload() + at, sizeof r);
    if (padded(r.payload_bytes) > left - sizeof r)
      corrupt(source, "request message",
              concat("request ", n, ": ", r.payload_bytes, " payload bytes, ", left - sizeof r, " left"));
    if (const std::string problem = request_problem(r, m.payload() + at + sizeof r); !problem.empty())
      corrupt(source, "request message", concat("request ", n, ": ", problem));
    at += sizeof r + padded(r.payload_bytes);
  }
  if (n != h.records) corrupt(source, "request message", concat(n, " requests, but its header says ", h.records));
}

// Sizes, kinds and indices of one request (its payload lies in the message: the caller checked):
// what serving, forwarding and combining it will read.
std::string hub::request_problem(const request_record& r, const std::byte* payload) const {
  if (r.op > op_code::get_packed) return concat("unknown op code ", static_cast<int>(r.op));
  if (r.owner < 0 || static_cast<std::size_t>(r.owner) >= config_.route.size())
    return concat("owner PE ", r.owner, " outside the job's ", config_.route.size());
  if (r.requester < 0 || static_cast<std::size_t>(r.requester) >= config_.endpoint_of.size())
    return concat("requesting PE ", r.requester, " outside the job's ", config_.endpoint_of.size());
  if (config_.reply_via[static_cast<std::size_t>(r.requester)] < 0)
    return concat("requesting PE ", r.requester, "'s requests never pass this endpoint");
  // Combined request ids of this endpoint never come back in a request: only in its replies.
  if (r.ticket != no_ticket && (r.ticket & combined_ticket) != 0 &&
      config_.endpoint_of[static_cast<std::size_t>(r.requester)] == config_.self)
    return concat("ticket ", r.ticket, " names a combined request of this endpoint");
  const std::uint64_t element = element_size_;
  const std::uint64_t count = r.count;
  std::uint64_t expected = 0;  // payload bytes
  switch (r.op) {
    case op_code::put: expected = count * element; break;
    case op_code::get: break;
    case op_code::lock:
    case op_code::unlock:
      if (count != 1) return concat(count, " mutexes in a lock or unlock (expected 1)");
      break;
    case op_code::accumulate:
      if (r.reduce > static_cast<std::uint8_t>(reduce_op::max)) return concat("unknown reduce_op ", int{r.reduce});
      expected = count * element;
      break;
    case op_code::fetch_add:
    case op_code::compare_exchange:
      if (count != 1) return concat(count, " elements in an atomic (expected 1)");
      expected = (r.op == op_code::fetch_add ? 1 : 2) * element;
      break;
    case op_code::put_packed:
    case op_code::get_packed: {
      if (count * sizeof(packed_region) > r.payload_bytes)
        return concat(count, " packed regions in ", r.payload_bytes, " payload bytes");
      std::uint64_t elements = 0;
      for (std::uint32_t i = 0; i < r.count; ++i) {
        packed_region region;
        std::memcpy(&region, payload + i * sizeof(packed_region), sizeof region);
        // A put's elements are in its payload: this keeps the sum, and its bytes, far below 2^64.
        if (r.op == op_code::put_packed && region.count > r.payload_bytes / element)
          return concat("packed region ", i, " of ", region.count, " elements, more than its payload holds");
        elements += region.count;
      }
      expected = count * sizeof(packed_region) + (r.op == op_code::put_packed ? elements * element : 0);
      break;
    }
  }
  if (r.payload_bytes != expected)
    return concat(r.payload_bytes, " payload bytes for op code ", static_cast<int>(r.op), " (expected ", expected, ")");
  if (config_.route[static_cast<std::size_t>(r.owner)] >= 0)
    return {};  // forwarded: the owner's endpoint checks its elements (a mutex's: its index)
  const std::uint64_t size = host_.block_elements(r.owner);
  const auto outside = [&](std::uint64_t offset, std::uint64_t n) { return offset > size || n > size - offset; };
  if (r.op != op_code::put_packed && r.op != op_code::get_packed) {
    if (outside(r.offset, count)) return concat("elements ", r.offset, "+", count, " outside PE ", r.owner, "'s ", size);
    return {};
  }
  for (std::uint32_t i = 0; i < r.count; ++i) {
    packed_region region;
    std::memcpy(&region, payload + i * sizeof(packed_region), sizeof region);
    if (outside(region.offset, region.count))
      return concat("packed region ", i, ": elements ", region.offset, "+", region.count, " outside PE ", r.owner,
                    "'s ", size);
  }
  return {};
}

void hub::check_control(int source, const std::byte* payload, std::size_t bytes) const {
  message_header h;
  std::memcpy(&h, payload, sizeof h);
  std::size_t at = sizeof h;
  std::uint32_t n = 0;
  for (; at < bytes; ++n) {
    const std::size_t left = bytes - at;
    if (left < sizeof(control_record))
      corrupt(source, "control message", concat("record ", n, " cut off (", left, " bytes left)"));
    control_record c;
    std::memcpy(&c, payload + at, sizeof c);
    if (padded(c.payload_bytes) > left - sizeof c)
      corrupt(source, "control message",
              concat("record ", n, ": ", c.payload_bytes, " payload bytes, ", left - sizeof c, " left"));
    if (c.type != control_type::reply && c.type != control_type::acks && c.type != control_type::credit)
      corrupt(source, "control message", concat("record ", n, ": unknown type ", static_cast<int>(c.type)));
    if (c.type != control_type::reply && c.payload_bytes != 0)
      corrupt(source, "control message", concat("record ", n, ": ", c.payload_bytes, " payload bytes on no reply"));
    if (c.type != control_type::credit &&
        (c.pe < 0 || static_cast<std::size_t>(c.pe) >= config_.reply_via.size() ||
         config_.reply_via[static_cast<std::size_t>(c.pe)] < 0))
      corrupt(source, "control message", concat("record ", n, ": replies for PE ", c.pe, " never pass this endpoint"));
    at += sizeof c + padded(c.payload_bytes);
  }
  if (n != h.records) corrupt(source, "control message", concat(n, " records, but its header says ", h.records));
}

// What one control record asks of this endpoint's state now, the records before it applied. A
// reply or acknowledgement passing through is checked where it ends, by its requester's endpoint.
std::string hub::control_problem(int source, const control_record& c) {
  if (c.type != control_type::credit && config_.reply_via[static_cast<std::size_t>(c.pe)] != config_.self) return {};
  switch (c.type) {
    case control_type::reply:
      if (c.value != no_ticket && (c.value & combined_ticket) != 0) {
        const std::uint32_t id = c.value & ~combined_ticket;
        if (id >= combined_.size() || combined_[id].parts.empty())
          return concat("reply for combined request ", id, ", which awaits none");
        const std::uint64_t expected = combined_[id].kind == combine_sum ? element_size_ : 0;
        if (c.payload_bytes != expected)
          return concat("reply of ", c.payload_bytes, " bytes to combined request ", id, " (expected ", expected, ")");
        return {};
      }
      return host_.refuse(c);
    case control_type::acks: return host_.refuse(c);
    case control_type::credit: {
      const auto it = link_of_.find(source);
      if (it == link_of_.end()) return "credit for a link this endpoint does not have";
      const int credits = links_[it->second].credits;
      if (c.value == 0 || c.value > static_cast<std::uint32_t>(link_credits - credits))
        return concat("credit of ", c.value, " for a link with ", credits, " of ", link_credits, " credits");
      return {};
    }
  }
  return {};
}

void hub::process_control(int source, const std::byte* payload, std::size_t bytes) {
  check_control(source, payload, bytes);
  std::size_t at = sizeof(message_header);
  for (std::uint32_t n = 0; at < bytes; ++n) {
    control_record c;
    std::memcpy(&c, payload + at, sizeof c);
    if (const std::string problem = control_problem(source, c); !problem.empty())
      corrupt(source, "control message", concat("record ", n, ": ", problem));
    const std::byte* data = payload + at + sizeof c;
    if (c.type != control_type::credit && config_.reply_via[static_cast<std::size_t>(c.pe)] != config_.self) {
      // On its way back to its requester: re-aggregated with this endpoint's own replies.
      ++counters_.replies_forwarded;
      hops_.add();
      if (c.type == control_type::acks) {
        acknowledge(c.pe, c.value);
      } else {
        control_record* out = reply_slot(c.pe, c.payload_bytes);
        *out = c;
        if (c.payload_bytes > 0) std::memcpy(out + 1, data, c.payload_bytes);
      }
      at += sizeof c + padded(c.payload_bytes);
      continue;
    }
    switch (c.type) {
      case control_type::reply:
        if (c.value != no_ticket && (c.value & combined_ticket) != 0) {
          complete_combined(c.value, data, c.payload_bytes);
        } else {
          host_.deliver_reply(c.pe, c.value, data, c.payload_bytes);
        }
        break;
      case control_type::acks:
        host_.deliver_acks(c.pe, c.value);
        break;
      case control_type::credit: {
        link& l = links_[link_of_.at(source)];
        l.credits += static_cast<int>(c.value);
        if (l.waiting) send_link(l);
        break;
      }
    }
    at += sizeof c + padded(c.payload_bytes);
  }
}

bool hub::receive() {
  batch_.clear();
  if (mail_ != nullptr) {
    mail_->take(channel_, batch_);
  } else {
    net_.poll(batch_, 256);
  }
  for (auto& m : batch_) {
    ++counters_.messages_received;
    message_header h;
    if (m.data.size() < sizeof h)
      corrupt(m.source, "message", concat(m.data.size(), " bytes, shorter than its ", sizeof h, "-byte header"));
    std::memcpy(&h, m.data.payload(), sizeof h);
    if (h.kind == message_kind::control) {
      process_control(m.source, m.data.payload(), m.data.size());
      net_.recycle(std::move(m.data));
      continue;
    }
    if (h.kind != message_kind::requests) corrupt(m.source, "message", concat("unknown kind ", static_cast<int>(h.kind)));
    check_requests(m.source, m.data);
    ++counters_.request_messages_received;
    auto it = in_link_of_.find(m.source);
    if (it == in_link_of_.end()) {
      it = in_link_of_.emplace(m.source, in_links_.size()).first;
      in_links_.emplace_back().endpoint = m.source;
    }
    in_link& in = in_links_[it->second];
    const std::size_t held = held_bytes(m.data);
    largest_message_ = std::max(largest_message_, held);
    in.queue.push_back(std::move(m.data));
    hold_bytes(static_cast<std::int64_t>(held));
    if (!in.listed) {
      in.listed = true;
      busy_.push_back(it->second);
    }
  }
  return !batch_.empty();
}

// Processes the queued messages of one incoming link in order. A request whose next link has no
// room stops this link only (its message stays queued, the credit is not yet returned); the
// other links go on: holding them up too would add waits that could close a cycle.
bool hub::process(in_link& in) {
  bool progressed = false;
  while (!in.queue.empty()) {
    message_buffer& m = in.queue.front();
    const std::byte* payload = m.payload();
    if (in.cursor == 0) in.cursor = sizeof(message_header);
    while (in.cursor < m.size()) {
      request_record r;
      std::memcpy(&r, payload + in.cursor, sizeof r);
      const bool here = config_.route[static_cast<std::size_t>(r.owner)] < 0;
      if (!route_or_serve(r, payload + in.cursor + sizeof r)) return progressed;
      if (!here) ++counters_.requests_forwarded;
      in.cursor += sizeof r + padded(r.payload_bytes);
      progressed = true;
    }
    control_record* c = control_slot(in.endpoint, 0);
    *c = control_record{control_type::credit, 0, 0, 0, -1, 1};
    hold_bytes(-static_cast<std::int64_t>(held_bytes(m)));
    net_.recycle(std::move(m));
    in.queue.pop_front();
    in.cursor = 0;
    progressed = true;
  }
  return progressed;
}

bool hub::process_in_links() {
  bool progressed = false;
  for (std::size_t i = 0; i < busy_.size();) {
    in_link& in = in_links_[busy_[i]];
    progressed |= process(in);
    if (in.queue.empty()) {
      in.listed = false;
      busy_[i] = busy_.back();
      busy_.pop_back();
    } else {
      ++i;
    }
  }
  return progressed;
}

bool hub::poll(bool may_flush_idle) {
  bool progressed = receive();
  progressed |= process_in_links();
  if (!lock_waiters_.empty()) progressed |= grant_waiting_locks();
  if (open_buffers_ > 0) {
    // A waiting endpoint forwards what just arrived in this same poll: on a shared core the
    // next poll may be a whole scheduling round away, and every hop of a request pays it.
    if (may_flush_idle) {
      flush_all();
    } else {
      flush_due(steady_clock::now());
    }
  }
  if (!control_dirty_.empty() || !acks_.empty()) flush_control();
  hops_.charge();
  return progressed;
}

std::string hub::describe() const {
  std::ostringstream out;
  out << "endpoint " << config_.self << ": " << open_buffers_ << " open request buffers, " << busy_.size()
      << " incoming links with queued messages, " << combined_live_ << " combined requests awaiting replies, "
      << lock_waiters_.size() << " lock requests waiting for their tickets";
  for (const auto& l : links_) {
    if (l.buffer || l.credits == 0)
      out << "\n    link to endpoint " << l.endpoint << ": " << l.records
          << " requests buffered, " << l.credits << " credits" << (l.waiting ? ", waiting for credit" : "");
  }
  for (const std::size_t i : busy_) {
    const auto& in = in_links_[i];
    out << "\n    from endpoint " << in.endpoint << ": " << in.queue.size()
        << " messages queued";
  }
  return out.str();
}

}  // namespace transit::detail
