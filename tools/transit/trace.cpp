// transit trace: reads the timeline files a run with --transit-trace=DIR wrote (one per PE,
// DIR/transit-trace-<PE>.json; src/trace/recorder.hpp, docs/trace.md).
//   transit trace summarize DIR [--series]  a report for a terminal: each PE's time split into
//       work / send / receive / idle, messages and bytes per dimension, the busiest PEs and links,
//       the load imbalance; --series prints messages sent over time per PE as JSON lines instead,
//       for tools/plot.py --xy.
//   transit trace merge DIR [--out FILE]    one file with every PE's events (Perfetto opens either).
// Pure computation on one process, like `transit map`; its own job records no trace (main.cpp).
#include <algorithm>
#include <cinttypes>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <map>
#include <set>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "cli.hpp"

namespace transit::cli {
namespace {

struct trace_options {
  std::string action;  // "summarize" or "merge"
  std::string dir;
  std::string out;      // merge: the file to write; empty = DIR/transit-trace-merged.json
  bool series = false;  // summarize --series
};

trace_options command_line;  // set by parsing `transit trace`, read-only while the job runs

/// The communication threads' files (hybrid mpi: transit-trace-comm-<rank>.json), for trace_files.
constexpr std::string_view comm_thread_files = "transit-trace-comm-";

/// N of a file named `prefix` N ".json" (N decimal digits that fit an int), or -1. By hand rather
/// than std::regex, whose GCC 12 headers do not build warning-free under the sanitizers.
int file_number(std::string_view file, std::string_view prefix) {
  constexpr std::string_view suffix = ".json";
  if (!file.starts_with(prefix) || !file.ends_with(suffix) || file.size() == prefix.size() + suffix.size()) return -1;
  const std::string_view digits = file.substr(prefix.size(), file.size() - prefix.size() - suffix.size());
  long n = 0;
  for (const char c : digits) {
    if (c < '0' || c > '9') return -1;
    n = n * 10 + (c - '0');
    if (n > 2147483647) return -1;
  }
  return static_cast<int>(n);
}

/// The files of DIR named `prefix` N ".json", by N: the PEs' files, or the communication threads'
/// (hybrid mpi backend), by rank.
std::map<int, std::filesystem::path> trace_files(const std::string& dir,
                                                 std::string_view prefix = "transit-trace-") {
  std::map<int, std::filesystem::path> files;
  std::error_code error;
  for (const auto& entry : std::filesystem::directory_iterator(dir, error)) {
    const int n = file_number(entry.path().filename().string(), prefix);
    if (n >= 0) files.emplace(n, entry.path());
  }
  return files;
}

nlohmann::json read_trace(const std::filesystem::path& file) {
  std::ifstream in(file);
  nlohmann::json doc = nlohmann::json::parse(in, nullptr, false);
  if (doc.is_discarded() || !doc.is_object() || !doc.contains("traceEvents") || !doc["traceEvents"].is_array())
    throw std::runtime_error("transit trace: " + file.string() +
                             ": not a transit trace (expected a JSON object with traceEvents, as --transit-trace "
                             "writes)");
  return doc;
}

std::string human_bytes(double bytes) {
  const char* units[] = {"B", "KiB", "MiB", "GiB", "TiB"};
  int unit = 0;
  while (bytes >= 1024 && unit < 4) {
    bytes /= 1024;
    ++unit;
  }
  char text[32];
  std::snprintf(text, sizeof text, unit == 0 ? "%.0f %s" : "%.1f %s", bytes, units[unit]);
  return text;
}

struct pe_summary {
  int pe = -1;
  double first_us = 1e300, last_us = -1e300;
  double send_us = 0, recv_us = 0, idle_us = 0;
  std::uint64_t messages_sent = 0, bytes_sent = 0, messages_received = 0, bytes_received = 0;
  std::uint64_t dropped = 0, waves = 0, tuning = 0;
  std::string written_at;
  double span_us() const { return last_us > first_us ? last_us - first_us : 0; }
  double work_us() const { return std::max(0.0, span_us() - send_us - recv_us - idle_us); }
};

struct dimension_summary {
  std::uint64_t messages = 0, bytes = 0;
  std::map<std::string, std::uint64_t> causes;
};

double number(const nlohmann::json& event, const char* key) {
  const auto it = event.find(key);
  return it != event.end() && it->is_number() ? it->get<double>() : 0.0;
}

int summarize(const std::map<int, std::filesystem::path>& files) {
  std::vector<pe_summary> pes;
  std::map<std::string, dimension_summary> dimensions;  // "dim 0", ..., "other"
  std::map<std::pair<int, int>, std::pair<std::uint64_t, std::uint64_t>> links;  // (from, to) -> (messages, bytes)
  std::vector<std::pair<int, double>> send_times;  // (pe, ts) of every send, for --series
  int pes_in_run = 0;
  std::string backend;
  std::uint64_t events = 0;
  for (const auto& [pe, file] : files) {
    const nlohmann::json doc = read_trace(file);
    pe_summary s;
    s.pe = pe;
    if (const auto other = doc.find("otherData"); other != doc.end() && other->is_object()) {
      pes_in_run = std::max(pes_in_run, static_cast<int>(number(*other, "pes")));
      s.dropped = static_cast<std::uint64_t>(number(*other, "events_dropped"));
      s.written_at = other->value("written_at", "");
      backend = other->value("backend", backend);
    }
    for (const auto& e : doc["traceEvents"]) {
      const std::string ph = e.value("ph", "");
      if (ph == "M" || ph == "C" || ph == "s" || ph == "f") continue;
      ++events;
      const double ts = number(e, "ts"), dur = number(e, "dur");
      s.first_us = std::min(s.first_us, ts);
      s.last_us = std::max(s.last_us, ts + dur);
      const std::string name = e.value("name", "");
      const nlohmann::json args = e.value("args", nlohmann::json::object());
      if (ph == "X" && name == "send") {
        const auto bytes = static_cast<std::uint64_t>(number(args, "bytes"));
        s.send_us += dur;
        ++s.messages_sent;
        s.bytes_sent += bytes;
        const std::string dimension = args.contains("dim") ? "dim " + std::to_string(args["dim"].get<int>()) : "other";
        dimension_summary& d = dimensions[dimension];
        ++d.messages;
        d.bytes += bytes;
        ++d.causes[args.value("cause", "other")];
        auto& link = links[{pe, static_cast<int>(number(args, "to"))}];
        ++link.first;
        link.second += bytes;
        send_times.emplace_back(pe, ts);
      } else if (ph == "X" && name == "recv") {
        s.recv_us += dur;
        ++s.messages_received;
        s.bytes_received += static_cast<std::uint64_t>(number(args, "bytes"));
      } else if (ph == "X" && name == "idle") {
        s.idle_us += dur;
      } else if (ph == "i" && name == "termination wave") {
        ++s.waves;
      } else if (ph == "i" && name.rfind("tuning:", 0) == 0) {
        ++s.tuning;
      }
    }
    pes.push_back(s);
  }

  double first = 1e300, last = -1e300;
  for (const auto& s : pes) {
    if (s.span_us() <= 0) continue;
    first = std::min(first, s.first_us);
    last = std::max(last, s.last_us);
  }
  if (command_line.series) {
    // Messages sent per PE in 50 equal slices of the job's span: tools/plot.py --xy ms messages --series pe.
    constexpr int slices = 50;
    const double width = last > first ? (last - first) / slices : 1;
    std::map<std::pair<int, int>, std::uint64_t> counts;
    for (const auto& [pe, ts] : send_times)
      ++counts[{pe, std::min(slices - 1, static_cast<int>((ts - first) / width))}];
    for (const auto& s : pes) {
      for (int i = 0; i < slices; ++i) {
        const auto it = counts.find({s.pe, i});
        std::printf("{\"pe\": %d, \"ms\": %.3f, \"messages\": %" PRIu64 "}\n", s.pe, (i + 0.5) * width / 1000,
                    it == counts.end() ? 0 : it->second);
      }
    }
    return 0;
  }

  std::uint64_t dropped = 0;
  for (const auto& s : pes) dropped += s.dropped;
  std::printf("transit trace %s: %zu PE files (%s, %d PEs in the run), %" PRIu64 " events, %s\n",
              command_line.dir.c_str(), pes.size(), backend.c_str(), pes_in_run, events,
              dropped == 0 ? "none dropped"
                           : (std::to_string(dropped) + " dropped (the oldest: rings were full)").c_str());
  for (int pe = 0; pe < pes_in_run; ++pe)
    if (files.find(pe) == files.end()) std::printf("  warning: no file for PE %d\n", pe);
  if (const auto comm = trace_files(command_line.dir, comm_thread_files); !comm.empty())
    std::printf("  note: %zu communication threads' files (their hand-offs: in 'transit trace merge', not in this "
                "report)\n",
                comm.size());
  for (const auto& s : pes) {
    if (s.written_at != "end") std::printf("  note: PE %d's file was written at: %s\n", s.pe, s.written_at.c_str());
    if (s.dropped > 0) std::printf("  note: PE %d dropped its %" PRIu64 " oldest events\n", s.pe, s.dropped);
  }
  std::printf("job span %.3f ms (first to last event of any PE)\n\n", last > first ? (last - first) / 1000 : 0.0);

  std::printf("time per PE (ms; work = span - send - receive - idle)\n");
  std::printf("  %6s %10s %10s %10s %10s %10s %7s %10s %11s %10s %11s\n", "PE", "span", "work", "send", "receive",
              "idle", "idle %", "msgs sent", "bytes sent", "msgs recv", "bytes recv");
  for (const auto& s : pes)
    std::printf("  %6d %10.3f %10.3f %10.3f %10.3f %10.3f %6.1f%% %10" PRIu64 " %11s %10" PRIu64 " %11s\n", s.pe,
                s.span_us() / 1000, s.work_us() / 1000, s.send_us / 1000, s.recv_us / 1000, s.idle_us / 1000,
                s.span_us() > 0 ? 100 * s.idle_us / s.span_us() : 0.0, s.messages_sent,
                human_bytes(static_cast<double>(s.bytes_sent)).c_str(), s.messages_received,
                human_bytes(static_cast<double>(s.bytes_received)).c_str());

  std::printf("\nmessages and bytes sent per dimension (the streamer's routing phase; other: link announcements,\n"
              "departures, sparse_exchange and one-sided messages)\n");
  for (const auto& [name, d] : dimensions) {
    std::string causes;
    for (const auto& [cause, n] : d.causes) causes += (causes.empty() ? "" : ", ") + cause + " " + std::to_string(n);
    std::printf("  %-8s %10" PRIu64 " messages %11s   mean %s   (%s)\n", name.c_str(), d.messages,
                human_bytes(static_cast<double>(d.bytes)).c_str(),
                human_bytes(d.messages > 0 ? static_cast<double>(d.bytes) / static_cast<double>(d.messages) : 0)
                    .c_str(),
                causes.c_str());
  }

  std::uint64_t total_bytes = 0;
  for (const auto& s : pes) total_bytes += s.bytes_sent;
  const auto share = [&](std::uint64_t bytes) {
    return total_bytes > 0 ? 100.0 * static_cast<double>(bytes) / static_cast<double>(total_bytes) : 0.0;
  };
  std::vector<const pe_summary*> by_bytes;
  for (const auto& s : pes) by_bytes.push_back(&s);
  std::sort(by_bytes.begin(), by_bytes.end(),
            [](const pe_summary* a, const pe_summary* b) { return a->bytes_sent > b->bytes_sent; });
  std::printf("\nbusiest PEs (bytes sent)\n");
  for (std::size_t i = 0; i < std::min<std::size_t>(5, by_bytes.size()); ++i)
    std::printf("  PE %-5d %11s (%.1f%%), %" PRIu64 " messages\n", by_bytes[i]->pe,
                human_bytes(static_cast<double>(by_bytes[i]->bytes_sent)).c_str(), share(by_bytes[i]->bytes_sent),
                by_bytes[i]->messages_sent);
  std::vector<std::pair<std::pair<int, int>, std::pair<std::uint64_t, std::uint64_t>>> busiest(links.begin(),
                                                                                                links.end());
  std::sort(busiest.begin(), busiest.end(),
            [](const auto& a, const auto& b) { return a.second.second > b.second.second; });
  std::printf("busiest links (bytes, of %zu links used)\n", links.size());
  for (std::size_t i = 0; i < std::min<std::size_t>(5, busiest.size()); ++i)
    std::printf("  PE %d -> PE %d  %11s (%.1f%%), %" PRIu64 " messages\n", busiest[i].first.first,
                busiest[i].first.second, human_bytes(static_cast<double>(busiest[i].second.second)).c_str(),
                share(busiest[i].second.second), busiest[i].second.first);

  // max / mean over PEs: 1 is perfect balance; the PE named is the one holding the others back.
  const auto imbalance = [&](const char* what, auto value) {
    double sum = 0, top = -1;
    int top_pe = -1;
    for (const auto& s : pes) {
      const double v = value(s);
      sum += v;
      if (v > top) {
        top = v;
        top_pe = s.pe;
      }
    }
    const double mean = pes.empty() ? 0 : sum / static_cast<double>(pes.size());
    if (mean > 0) std::printf("  %-12s max/mean %.2f (PE %d)\n", what, top / mean, top_pe);
  };
  std::printf("\nload imbalance (max / mean over PEs; 1.00 = even)\n");
  imbalance("work", [](const pe_summary& s) { return s.work_us(); });
  imbalance("bytes sent", [](const pe_summary& s) { return static_cast<double>(s.bytes_sent); });
  imbalance("bytes recv", [](const pe_summary& s) { return static_cast<double>(s.bytes_received); });
  imbalance("idle", [](const pe_summary& s) { return s.idle_us; });
  std::uint64_t waves = 0, tuning = 0;
  for (const auto& s : pes) {
    waves = std::max(waves, s.waves);
    tuning = std::max(tuning, s.tuning);
  }
  std::printf("\ntermination waves (quiesce): %" PRIu64 "; tuning decisions: %" PRIu64 "\n", waves, tuning);
  return 0;
}

int merge(std::map<int, std::filesystem::path> files) {
  // The communication threads' rows after the PEs' (their keys: past every PE's).
  const auto comm_threads = trace_files(command_line.dir, comm_thread_files);
  const int pes = files.empty() ? 0 : files.rbegin()->first + 1;
  for (const auto& [rank, path] : comm_threads) files.emplace(pes + rank, path);
  const std::string out =
      command_line.out.empty() ? (std::filesystem::path(command_line.dir) / "transit-trace-merged.json").string()
                               : command_line.out;
  std::ofstream file(out);
  if (!file) throw std::runtime_error("transit trace merge: cannot write '" + out + "'");
  std::uint64_t dropped = 0, events = 0;
  file << "{\"displayTimeUnit\":\"ns\",\"traceEvents\":[";
  bool first = true;
  for (const auto& [pe, path] : files) {
    const nlohmann::json doc = read_trace(path);
    if (const auto other = doc.find("otherData"); other != doc.end() && other->is_object())
      dropped += static_cast<std::uint64_t>(number(*other, "events_dropped"));
    for (const auto& e : doc["traceEvents"]) {
      file << (first ? "\n" : ",\n") << e.dump();
      first = false;
      ++events;
    }
  }
  file << "\n],\"otherData\":{\"transit_trace\":1,\"merged_files\":" << files.size()
       << ",\"events_dropped\":" << dropped << "}}\n";
  file.close();
  if (!file) throw std::runtime_error("transit trace merge: writing '" + out + "' failed");
  std::printf("transit trace merge: %" PRIu64 " events of %zu PEs%s in %s\n", events, files.size() - comm_threads.size(),
              comm_threads.empty() ? "" : (" and " + std::to_string(comm_threads.size()) + " communication threads").c_str(),
              out.c_str());
  return 0;
}

int trace_command() {
  const auto files = trace_files(command_line.dir);
  return command_line.action == "merge" ? merge(files) : summarize(files);
}

void add_trace_options(CLI::App& app) {
  app.require_subcommand(1, 1);
  CLI::App* summarize_app =
      app.add_subcommand("summarize", "a report of a run's trace: time, messages, busiest PEs and links");
  CLI::App* merge_app = app.add_subcommand("merge", "merge a run's per-PE trace files into one");
  for (CLI::App* sub : {summarize_app, merge_app}) {
    sub->add_option("dir", command_line.dir, "the directory given to --transit-trace")->required()->type_name("DIR");
    sub->final_callback([sub] {
      command_line.action = sub->get_name();
      if (trace_files(command_line.dir).empty())
        usage_error("DIR", command_line.dir,
                    "a directory holding transit-trace-<PE>.json files (written by a run with --transit-trace=DIR)");
    });
  }
  add_flag_once(*summarize_app, "--series", command_line.series,
                "print messages sent over time per PE as JSON lines (for tools/plot.py --xy ms messages --series pe)");
  merge_app->add_option("--out", command_line.out, "the merged file (default: DIR/transit-trace-merged.json)")
      ->type_name("FILE");
}

const bool registered = register_command({
    .name = "trace",
    .summary = "summarize or merge the timeline files of a run with --transit-trace=DIR (pure computation, 1 PE)",
    .add_options = add_trace_options,
    .run = [](context& ctx) { return ctx.rank() == 0 ? trace_command() : 0; },
    .local_pes = 1,
    .traced = false,
});

}  // namespace
}  // namespace transit::cli
