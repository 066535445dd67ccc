#include "trace/recorder.hpp"

#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cinttypes>
#include <cstdio>
#include <cstring>
#include <map>
#include <utility>

#include "transit/detail/core/clock.hpp"

namespace transit::detail::trace {

namespace {

// Counter samples (bytes sent and received so far) are made from the send and receive events
// when the file is written, at most one per this many nanoseconds of trace time: a counter track
// that Perfetto draws at any zoom without one sample per message.
constexpr std::int64_t counter_period_ns = 100'000;

std::uint64_t mix(std::uint64_t x) noexcept {  // splitmix64's finaliser
  x ^= x >> 30;
  x *= 0xbf58476d1ce4e5b9ULL;
  x ^= x >> 27;
  x *= 0x94d049bb133111ebULL;
  return x ^ (x >> 31);
}

std::uint64_t pair_key(int peer, std::uint32_t channel) noexcept {
  return (static_cast<std::uint64_t>(static_cast<std::uint32_t>(peer)) << 32) | channel;
}

void append_escaped(std::string& out, std::string_view text) {
  for (const char c : text) {
    if (c == '"' || c == '\\') {
      out += '\\';
      out += c;
    } else if (static_cast<unsigned char>(c) < 0x20) {
      char code[8];
      std::snprintf(code, sizeof code, "\\u%04x", static_cast<unsigned>(static_cast<unsigned char>(c)));
      out += code;
    } else {
      out += c;
    }
  }
}

// Microseconds with nanosecond digits, as the format wants them ("ts": 12.345).
void append_us(std::string& out, std::int64_t ns) {
  char text[32];
  const char* sign = ns < 0 ? "-" : "";
  const std::uint64_t magnitude = ns < 0 ? static_cast<std::uint64_t>(-(ns + 1)) + 1 : static_cast<std::uint64_t>(ns);
  std::snprintf(text, sizeof text, "%s%" PRIu64 ".%03" PRIu64, sign, magnitude / 1000, magnitude % 1000);
  out += text;
}

// Writes all of `text` at the file's end; false (errno set) when the disk refuses.
bool write_all(int fd, std::string_view text) {
  while (!text.empty()) {
    const ssize_t n = ::write(fd, text.data(), text.size());
    if (n < 0) {
      if (errno == EINTR) continue;
      return false;
    }
    text.remove_prefix(static_cast<std::size_t>(n));
  }
  return true;
}

}  // namespace

std::uint64_t flow_id(int source, int dest, std::uint32_t channel, std::uint64_t k) noexcept {
  if (k >= 16 && k % 64 != 0) return 0;
  const std::uint64_t id =
      mix(mix(mix(static_cast<std::uint64_t>(static_cast<std::uint32_t>(source)) * 0x9e3779b97f4a7c15ULL ^
                  static_cast<std::uint32_t>(dest)) ^
              channel) ^
          k) &
      ((std::uint64_t{1} << 53) - 1);
  return id == 0 ? 1 : id;
}

std::string_view to_string(send_cause cause) noexcept {
  switch (cause) {
    case send_cause::full: return "full";
    case send_cause::timer: return "timer";
    case send_cause::final: return "final";
    case send_cause::bound: return "bound";
    case send_cause::links: return "links";
    case send_cause::left: return "left";
    case send_cause::acknowledgement: return "acknowledgement";
    case send_cause::direct: return "direct";
    case send_cause::other: break;
  }
  return "other";
}

recorder::recorder(std::string dir, int pe, int pes, int process, std::string process_name, std::string backend,
                   std::size_t capacity)
    : dir_(std::move(dir)), pe_(pe), pes_(pes), process_(process), tid_(pe), thread_name_("PE " + std::to_string(pe)),
      file_name_("transit-trace-" + std::to_string(pe) + ".json"), who_(thread_name_),
      process_name_(std::move(process_name)), backend_(std::move(backend)), capacity_(std::max<std::size_t>(capacity, 1)) {
  ring_.reserve(std::min<std::size_t>(capacity_, 4096));
  labels_.push_back({"", "", ""});  // id 0 is never handed out: callers may keep 0 as "not asked yet"
}

recorder recorder::for_comm_thread(std::string dir, int rank, int pes, std::string process_name, std::string backend,
                                   std::size_t capacity) {
  recorder r(std::move(dir), -1, pes, rank, std::move(process_name), std::move(backend), capacity);
  r.tid_ = pes + rank;  // after every PE's row in the merged file
  r.thread_name_ = "comm thread";
  r.file_name_ = "transit-trace-comm-" + std::to_string(rank) + ".json";
  r.who_ = "rank " + std::to_string(rank) + ", communication thread";
  return r;
}

std::int64_t recorder::now() {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(steady_clock::now().time_since_epoch()).count();
}

std::string recorder::path() const { return dir_ + "/" + file_name_; }

recorder::event& recorder::push() {
  ++recorded_;
  if (ring_.size() < capacity_) return ring_.emplace_back();
  event& e = ring_[(recorded_ - 1) % capacity_];
  e = event{};
  return e;
}

void recorder::sent(int dest, std::uint32_t channel, std::size_t bytes, std::int64_t start, std::int64_t end) {
  event& e = push();
  e.type = kind::send;
  e.start = start;
  e.duration = end - start;
  e.a = bytes;
  e.peer = dest;
  e.channel = channel;
  e.dimension = next_dimension_;
  e.cause = next_cause_;
  e.flow = flow_id(pe_, dest, channel, sent_on_[pair_key(dest, channel)]++);
  next_dimension_ = -1;
  next_cause_ = send_cause::other;
}

void recorder::received(int source, std::uint32_t channel, std::uint32_t endpoint, const std::byte* data,
                        std::size_t bytes, std::int64_t start, std::int64_t end, std::size_t index, std::size_t count) {
  // The poll's time, shared out among the messages it handed over, in order.
  const std::int64_t share = (end - start) / static_cast<std::int64_t>(count);
  event& e = push();
  e.type = kind::receive;
  e.start = start + share * static_cast<std::int64_t>(index);
  e.duration = share;
  e.a = bytes;
  e.peer = source;
  e.channel = channel;
  e.flow = flow_id(source, pe_, channel, received_on_[pair_key(source, channel)]++);
  if (dimension_offset_.empty()) return;
  const auto described = dimension_offset_.find(endpoint);
  if (described != dimension_offset_.end() && described->second < bytes)
    e.dimension = static_cast<std::int16_t>(std::to_integer<std::uint8_t>(data[described->second]));
}

void recorder::relayed(bool outgoing, int source, int dest, std::uint32_t channel, std::size_t bytes,
                       std::int64_t start, std::int64_t end) {
  event& e = push();
  e.type = outgoing ? kind::relay_out : kind::relay_in;
  e.start = start;
  e.duration = end - start;
  e.a = bytes;
  e.peer = outgoing ? dest : source;
  e.b = static_cast<std::uint64_t>(outgoing ? source : dest);
  e.channel = channel;
  e.flow = flow_id(source, dest, channel, relayed_on_[{source, dest, channel}]++);
}

std::uint32_t recorder::label(std::string_view name, std::string_view arg_a, std::string_view arg_b) {
  std::string key;
  key.reserve(name.size() + arg_a.size() + arg_b.size() + 2);
  key.append(name).append(1, '\0').append(arg_a).append(1, '\0').append(arg_b);
  const auto [it, added] = label_ids_.try_emplace(std::move(key), static_cast<std::uint32_t>(labels_.size()));
  if (added) labels_.push_back({std::string(name), std::string(arg_a), std::string(arg_b)});
  return it->second;
}

void recorder::slice(std::uint32_t id, std::int64_t start, std::int64_t end, std::uint64_t a, std::uint64_t b) {
  event& e = push();
  e.type = kind::slice;
  e.label = id;
  e.start = start;
  e.duration = end - start;
  e.a = a;
  e.b = b;
}

void recorder::instant(std::uint32_t id, std::int64_t at, std::uint64_t a, std::uint64_t b) {
  event& e = push();
  e.type = kind::instant;
  e.label = id;
  e.start = at;
  e.a = a;
  e.b = b;
}

// One line per event of the file, sorted by time (longer first at one time, so that a slice comes
// before the slices it encloses), with the counter samples and flow events made here.
std::vector<std::string> recorder::render() const {
  std::vector<const event*> events;
  events.reserve(ring_.size());
  for (const event& e : ring_) events.push_back(&e);
  std::stable_sort(events.begin(), events.end(), [](const event* x, const event* y) {
    return x->start != y->start ? x->start < y->start : x->duration > y->duration;
  });

  char ids[64];
  std::snprintf(ids, sizeof ids, "\"pid\":%d,\"tid\":%d", process_, tid_);
  const auto begin_event = [&](std::string& line, std::string_view ph, std::string_view name, std::int64_t ts) {
    line += "{\"ph\":\"";
    line += ph;
    line += "\",\"name\":\"";
    append_escaped(line, name);
    line += "\",";
    line += ids;
    line += ",\"ts\":";
    append_us(line, ts);
  };
  std::vector<std::string> lines;
  lines.reserve(events.size() + events.size() / 8 + 8);
  std::map<int, std::uint64_t> sent_bytes;  // by dimension (-1: not a streamer's data)
  std::uint64_t received_bytes = 0;
  std::int64_t last_counter = 0;
  bool counted = false;
  // Counter tracks belong to a process in this format: on the local backend all PEs share one,
  // so each PE's counters carry its number.
  const std::string sent_name = "PE " + std::to_string(pe_) + " bytes sent";
  const std::string received_name = "PE " + std::to_string(pe_) + " bytes received";
  const auto counters = [&](std::int64_t ts) {
    std::string line;
    begin_event(line, "C", sent_name, ts);
    line += ",\"args\":{";
    bool first = true;
    for (const auto& [dimension, bytes] : sent_bytes) {
      line += first ? "\"" : ",\"";
      line += dimension < 0 ? std::string("other") : "dim " + std::to_string(dimension);
      line += "\":" + std::to_string(bytes);
      first = false;
    }
    line += "}}";
    lines.push_back(std::move(line));
    line.clear();
    begin_event(line, "C", received_name, ts);
    line += ",\"args\":{\"all\":" + std::to_string(received_bytes) + "}}";
    lines.push_back(std::move(line));
    last_counter = ts;
    counted = true;
  };
  // A message's slice up to its bytes (the caller adds the other arguments), and its arrow's event.
  const auto message_slice = [&](std::string& line, std::string_view name, const event& e) {
    begin_event(line, "X", name, e.start);
    line += ",\"dur\":";
    append_us(line, e.duration);
    line += ",\"cat\":\"message\",\"args\":{\"bytes\":" + std::to_string(e.a);
  };
  const auto arrow = [&](std::string_view ph, const event& e, std::string_view tail) {
    std::string line;
    begin_event(line, ph, "message", e.start);
    line += ",\"cat\":\"message\",\"id\":" + std::to_string(e.flow);
    line += tail;
    lines.push_back(std::move(line));
  };
  for (const event* e : events) {
    std::string line;
    switch (e->type) {
      case kind::send:
      case kind::receive: {
        const bool send = e->type == kind::send;
        message_slice(line, send ? "send" : "recv", *e);
        line += (send ? ",\"to\":" : ",\"from\":") + std::to_string(e->peer) + ",\"channel\":" + std::to_string(e->channel);
        if (e->dimension >= 0) line += ",\"dim\":" + std::to_string(e->dimension);
        if (send) {
          line += ",\"cause\":\"";
          line += to_string(e->cause);
          line += "\"";
        }
        line += "}}";
        lines.push_back(std::move(line));
        if (e->flow != 0) arrow(send ? "s" : "f", *e, send ? "}" : ",\"bp\":\"e\"}");
        if (send) {
          sent_bytes[e->dimension] += e->a;
        } else {
          received_bytes += e->a;
        }
        if (!counted || e->start - last_counter >= counter_period_ns) counters(e->start);
        break;
      }
      case kind::relay_out:
      case kind::relay_in: {
        const bool out = e->type == kind::relay_out;
        message_slice(line, out ? "hand-off to MPI" : "hand-off to PE", *e);
        line += ",\"from\":" +
                std::to_string(out ? static_cast<std::int64_t>(e->b) : e->peer) + ",\"to\":" +
                std::to_string(out ? e->peer : static_cast<std::int64_t>(e->b)) + ",\"channel\":" +
                std::to_string(e->channel) + "}}";
        lines.push_back(std::move(line));
        if (e->flow != 0) arrow("t", *e, "}");  // a step of the send's arrow, bound to this slice
        break;
      }
      case kind::slice:
      case kind::instant: {
        const label_names& l = labels_[e->label];
        const bool slice = e->type == kind::slice;
        begin_event(line, slice ? "X" : "i", l.name, e->start);
        if (slice) {
          line += ",\"dur\":";
          append_us(line, e->duration);
        } else {
          line += ",\"s\":\"t\"";
        }
        line += ",\"cat\":\"transit\",\"args\":{";
        if (!l.a.empty()) {
          line += "\"";
          append_escaped(line, l.a);
          line += "\":" + std::to_string(e->a);
        }
        if (!l.b.empty()) {
          line += l.a.empty() ? "\"" : ",\"";
          append_escaped(line, l.b);
          line += "\":" + std::to_string(e->b);
        }
        line += "}}";
        lines.push_back(std::move(line));
        break;
      }
    }
  }
  if (counted && last_counter != events.back()->start) counters(events.back()->start);
  return lines;
}

bool recorder::write(std::string_view why) noexcept {
  const std::string file = path();
  const char* problem = nullptr;
  int error = 0;
  std::size_t written_events = 0, events = 0;
  bool removed = false;
  try {
    const std::vector<std::string> lines = render();
    events = lines.size();
    std::string head = "{\"displayTimeUnit\":\"ns\",\"otherData\":{\"transit_trace\":1,\"pe\":" + std::to_string(pe_);
    if (pe_ < 0) head += ",\"comm_thread_of_rank\":" + std::to_string(process_);  // for_comm_thread
    head += ",\"pes\":" + std::to_string(pes_) + ",\"backend\":\"";
    append_escaped(head, backend_);  // the caller's labels, as they are: the recorder tests neither
    head += "\",\"written_at\":\"";
    append_escaped(head, why);
    head += "\",\"events_recorded\":" + std::to_string(recorded_) + ",\"events_dropped\":" + std::to_string(dropped()) +
            ",\"ring_capacity\":" + std::to_string(capacity_) + "},\n\"traceEvents\":[\n";
    char ids[64];
    std::snprintf(ids, sizeof ids, "\"pid\":%d,\"tid\":%d", process_, tid_);
    head += std::string("{\"ph\":\"M\",\"name\":\"process_name\",") + ids + ",\"args\":{\"name\":\"";
    append_escaped(head, process_name_);
    head += "\"}},\n";
    head += std::string("{\"ph\":\"M\",\"name\":\"thread_name\",") + ids + ",\"args\":{\"name\":\"" + thread_name_ + "\"}},\n";
    head += std::string("{\"ph\":\"M\",\"name\":\"thread_sort_index\",") + ids + ",\"args\":{\"sort_index\":" +
            std::to_string(tid_) + "}}";
    if (dropped() > 0)
      head += std::string(",\n{\"ph\":\"M\",\"name\":\"transit_dropped\",") + ids + ",\"args\":{\"dropped\":" +
              std::to_string(dropped()) + ",\"kept\":" + std::to_string(capacity_) +
              ",\"note\":\"the ring was full: the oldest events were overwritten\"}}";

    const int fd = ::open(file.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
    if (fd < 0) {
      std::fprintf(stderr,
                   "transit: %s: warning: --transit-trace: %s could not be created (%s): this thread's trace is lost\n",
                   who_.c_str(), file.c_str(), std::strerror(errno));
      std::fflush(stderr);
      return false;
    }
    {
      // `good`: the end of the last whole event. On a refused write the file is cut back there
      // and closed: truncated, but valid JSON. Cutting frees what the partial write took, which
      // is what lets the closing bytes fit on a full disk; if they still do not, earlier events go
      // too (offsets of the last few are kept), down to the bare header.
      std::vector<off_t> boundaries;
      off_t good = 0;
      bool ok = write_all(fd, head);
      if (ok) good = static_cast<off_t>(head.size());
      for (std::size_t i = 0; ok && i < lines.size(); ++i) {
        ok = write_all(fd, ",\n") && write_all(fd, lines[i]);
        if (ok) {
          boundaries.push_back(good);
          if (boundaries.size() > 64) boundaries.erase(boundaries.begin());
          good += static_cast<off_t>(2 + lines[i].size());
          ++written_events;
        }
      }
      if (ok) ok = write_all(fd, "\n]}\n");
      if (!ok) {
        error = errno;
        problem = "could not be written whole";
        bool closed = false;
        while (!closed && good > 0) {
          closed = ::ftruncate(fd, good) == 0 && ::lseek(fd, 0, SEEK_END) >= 0 &&
                   write_all(fd, ",\n{\"ph\":\"M\",\"name\":\"transit_truncated\"," + std::string(ids) +
                                     ",\"args\":{\"note\":\"the disk refused the rest\"}}\n]}\n");
          if (!closed) closed = ::ftruncate(fd, good) == 0 && ::lseek(fd, 0, SEEK_END) >= 0 && write_all(fd, "\n]}\n");
          if (!closed) {
            if (boundaries.empty()) break;
            good = boundaries.back();
            boundaries.pop_back();
            if (written_events > 0) --written_events;
          }
        }
        if (!closed) {
          ::unlink(file.c_str());  // better no file than one that no JSON reader opens
          written_events = 0;
          removed = true;
        }
      }
      if (::close(fd) != 0 && problem == nullptr) {
        error = errno;
        problem = "could not be written whole";
      }
    }
  } catch (const std::exception& e) {
    std::fprintf(stderr, "transit: %s: warning: --transit-trace: %s was not written: %s\n", who_.c_str(),
                 file.c_str(), e.what());
    return false;
  }
  if (problem == nullptr) return true;
  std::fprintf(stderr,
               "transit: %s: warning: --transit-trace: %s %s (%s): it holds the first %zu of %zu events, %s\n",
               who_.c_str(), file.c_str(), problem, std::strerror(error), written_events, events,
               removed ? "so it was removed" : "cut after a whole event and closed (valid JSON)");
  std::fflush(stderr);
  return false;
}

}  // namespace transit::detail::trace
