// hotspot: HiCOO's hot-spot tests (Yu et al. 2012, section 4.2, figs. 10 to 12). Every PE runs
// --iterations rounds of --ops one-sided operations between two sync()s. --contention percent of
// the PEs (spread evenly over the ranks) aim at PE 0, the others at a partner PE (never PE 0).
// --op fetch-add: one fetch_add on the target's word; --op put-v: a noncontiguous put of
// --regions regions of --region-bytes bytes into the target's block, then fence() (the vectored
// put complete at its target); --op get: one blocking get of the target's word (one word, so that
// it differs from fetch-add only in being non-combinable: same request and reply sizes, the same
// messages in mpi-raw); --op lock: lock the mutex homed at the target (mutex m lives on PE
// m % P), read-modify-write the target's counter inside it (a get, then a put of the value plus
// one; not atomic), unlock (which completes the put). Gets, puts and locks have nothing to
// combine: --no-combine changes nothing for them, and their runs verify that nothing was
// combined. Reports the time per operation, each PE's mean over its rounds,
// as mean, median and max over PEs, what reached PE 0 (request messages against requests
// aimed at it: the effect of aggregation and combining) and the request messages that crossed
// between nodes (mpi-rma: operations on another node's memory). --scheme mpi-raw (fetch-add, get
// and lock): the same rounds as a plain MPI program, each fetch-add or get one message to the
// owner and one back, each lock a flat lock server's request, grant (FIFO, carrying the counter)
// and release (carrying it back plus one): the floor of any design that carries requests in
// messages. Verified: every word holds exactly the increments aimed at it; every region
// the bytes of its source's last round; every get returns the value its target's word was given
// before the first sync (a function of the target PE); every counter equals the lock operations
// aimed at it. The lock check is the read-modify-write rather than a cheaper holder count because
// it checks what a lock is for, mutual exclusion that also orders the holders' writes: two holders
// at once, or a holder that does not see its predecessor's put, lose an increment.
#include <algorithm>
#include <chrono>
#include <optional>
#include <string>
#include <vector>

#include "bench.hpp"
#include "one_sided_kernels.hpp"

#include "transit/detail/core/clock.hpp"

namespace transit::bench {

namespace {

struct parameters {
  std::string op = "fetch-add";
  int contention = 100;
  int ops = 10;
  int iterations = 100;
  int regions = 8;
  int region_bytes = 64;
  one_sided_choice choice;
  bool no_combine = false;
  std::size_t buffer_bytes = 16384;
  int flush_us = 10;
};
parameters params;  // set by the command line before any PE starts

bool aims_at_pe0(int rank, int contention) {
  // floor(P * c / 100) PEs, spread evenly: rank r contends when floor(r c / 100) steps at r.
  return (rank * contention) / 100 != ((rank + 1) * contention) / 100;
}

int partner_of(int rank, int pes) { return pes < 2 ? 0 : 1 + (rank + pes / 2 - 1) % (pes - 1); }

int target_of(int rank, int pes, int contention) {
  return aims_at_pe0(rank, contention) ? 0 : partner_of(rank, pes);
}

one_sided_options options_of(const parameters& p) {
  one_sided_options o = p.choice.options();
  o.combine = !p.no_combine;
  o.buffer_bytes = p.buffer_bytes;
  o.flush_period = std::chrono::microseconds(p.flush_us);
  return o;
}

/// Every PE's value, on every PE (a small gather through a global array of our own).
std::vector<double> gather(context& ctx, double mine) {
  one_sided_options o;
  o.topology = request_topology::fcg;
  global_array<double> all(ctx, static_cast<std::size_t>(ctx.size()), o);
  all.put(static_cast<std::size_t>(ctx.rank()), std::span<const double>(&mine, 1));
  all.sync();
  std::vector<double> values(static_cast<std::size_t>(ctx.size()));
  all.get(0, values);
  all.sync();
  return values;
}

/// The time per operation, each PE's mean over its rounds, as mean, median and max over PEs; and the
/// fields every record carries.
void add_times_and_setting(context& ctx, const parameters& p, double busy_seconds, measurement& m) {
  const double per_op_us = busy_seconds / (p.ops * p.iterations) * 1e6;
  const std::vector<double> times = gather(ctx, per_op_us);
  double sum = 0;
  for (const double t : times) sum += t;
  m.items_per_pe = static_cast<double>(p.ops) * p.iterations;
  m.extra["op"] = p.op;
  m.extra["contention"] = p.contention;
  m.extra["ops"] = p.ops;
  m.extra["iterations"] = p.iterations;
  m.extra["mean_us"] = sum / static_cast<double>(times.size());
  m.extra["median_us"] = median(times);
  m.extra["max_us"] = *std::max_element(times.begin(), times.end());
}

/// The value PE `pe`'s word holds for --op get: a function of the PE, so a get that reads another
/// word, or nothing, fails.
std::uint64_t word_of(int pe) { return 0x9e3779b97f4a7c15ULL * static_cast<std::uint64_t>(pe + 1); }

/// How many PEs aim at `rank`.
std::uint64_t aimed_at(int rank, int pes, int contention) {
  std::uint64_t aimed = 0;
  for (int source = 0; source < pes; ++source) aimed += target_of(source, pes, contention) == rank ? 1 : 0;
  return aimed;
}

/// --scheme mpi-raw: fetch-add or get as a plain MPI program, one message to the owner and one back.
/// Not a topology of global_array: the floor of any design that sends requests as messages.
measurement run_hotspot_mpi_raw(context& ctx, const parameters& p) {
  const int pes = ctx.size();
  const int rank = ctx.rank();
  const int target = target_of(rank, pes, p.contention);
  const bool get = p.op == "get";
  const std::uint64_t per_pe = static_cast<std::uint64_t>(p.ops) * static_cast<std::uint64_t>(p.iterations);
  const std::uint64_t aimed_ops = aimed_at(rank, pes, p.contention) * per_pe;
  measurement m;
  double busy = 0;
  // Messages a remote operation sends: a request and its reply; a lock's request, grant, release.
  std::uint64_t messages_per_op = 2;
  if (p.op == "lock") {
    const raw_locks raw = hotspot_mpi_raw_locks(ctx, p.ops, p.iterations, target);
    m.seconds = raw.seconds;
    m.verified = raw.counter == aimed_ops;
    m.stats.messages_sent = raw.messages;
    busy = raw.busy_seconds;
    messages_per_op = 3;
  } else {
    const raw_fetch_adds raw =
        get ? hotspot_mpi_raw(ctx, p.ops, p.iterations, target, 0, word_of(rank), word_of(target))
            : hotspot_mpi_raw(ctx, p.ops, p.iterations, target, 1, 0, std::nullopt);
    m.seconds = raw.seconds;
    m.verified = get ? raw.word == word_of(rank) && raw.wrong_replies == 0 : raw.word == aimed_ops;
    m.stats.messages_sent = raw.messages;
    busy = raw.busy_seconds;
  }
  const bool remote = ctx.machine().node_of(target) != ctx.machine().node_of(rank);
  m.stats.inter_node_messages = remote ? messages_per_op * per_pe : 0;
  // Requests: the lock request and the release (the grant answers), as a fetch-add's request.
  const std::uint64_t requests_per_op = messages_per_op - 1;
  m.extra["request_messages_between_nodes"] =
      ctx.allreduce(remote ? requests_per_op * per_pe : std::uint64_t{0}, reduce_op::sum);
  add_times_and_setting(ctx, p, busy, m);
  m.extra["topology"] = "mpi-raw";
  m.extra["progress"] = "polling";
  m.extra["combine"] = false;
  // No request buffers and no per-endpoint counts: MPI carries each request alone.
  for (const char* field : {"request_messages_at_target", "target_messages_per_request"}) m.extra[field] = nullptr;
  for (const char* field : {"links_max", "request_buffer_bytes_per_pe", "request_buffer_bytes_peak"}) m.extra[field] = 0;
  return m;
}

/// Both engines' counters of --op lock (its mutexes and its counters) as one: sums, but the
/// links of the larger.
one_sided_stats sum_of(one_sided_stats a, const one_sided_stats& b) {
  a.requests_sent += b.requests_sent;
  a.applied_in_node += b.applied_in_node;
  a.requests_forwarded += b.requests_forwarded;
  a.requests_combined += b.requests_combined;
  a.requests_served += b.requests_served;
  a.messages_sent += b.messages_sent;
  a.request_messages_sent += b.request_messages_sent;
  a.request_messages_between_nodes += b.request_messages_between_nodes;
  a.request_messages_received += b.request_messages_received;
  a.credit_waits += b.credit_waits;
  a.replies_forwarded += b.replies_forwarded;
  a.reply_peers += b.reply_peers;
  a.links = std::max(a.links, b.links);
  a.request_buffer_bytes += b.request_buffer_bytes;
  a.request_buffer_bytes_peak += b.request_buffer_bytes_peak;
  return a;
}

measurement run_hotspot(context& ctx, const setup& s) {
  const parameters p = params;
  if (s.opt.route == scheme::mpi_raw) return run_hotspot_mpi_raw(ctx, p);
  const int pes = ctx.size();
  const int rank = ctx.rank();
  const int target = target_of(rank, pes, p.contention);
  const bool put_v = p.op == "put-v";
  const bool get = p.op == "get";
  const bool lock = p.op == "lock";
  const one_sided_options o = options_of(p);
  // fetch-add and get: one word per PE; lock: one counter per PE (the same array). put-v: in each
  // PE's block, an area per source PE of --regions regions at a stride of two region sizes
  // (noncontiguous).
  const std::size_t area = static_cast<std::size_t>(p.regions) * static_cast<std::size_t>(p.region_bytes) * 2;
  const std::size_t per_pe = put_v ? area * static_cast<std::size_t>(pes) : 1;
  global_array<std::uint64_t> words(ctx, put_v ? 1 : static_cast<std::size_t>(pes), o);
  global_array<std::uint8_t> bytes(ctx, put_v ? per_pe * static_cast<std::size_t>(pes) : 1, o);
  std::optional<global_mutexes> mutexes;  // lock only: no other op runs with a third engine
  if (lock) mutexes.emplace(ctx, pes, o);  // mutex `target` is homed at the target
  std::vector<std::uint8_t> region(static_cast<std::size_t>(p.region_bytes));
  if (get) words.local()[0] = word_of(rank);
  words.sync();  // every PE's word set before any get

  double busy = 0;
  std::uint64_t wrong_gets = 0;
  measurement m;
  m.seconds = measure(ctx, [&] {
    for (int it = 0; it < p.iterations; ++it) {
      const auto start = detail::steady_clock::now();
      for (int k = 0; k < p.ops; ++k) {
        std::uint64_t value = 0;
        if (get) {
          words.get(static_cast<std::size_t>(target), std::span<std::uint64_t>(&value, 1));
          wrong_gets += value == word_of(target) ? 0 : 1;
        } else if (lock) {
          mutexes->lock(target);
          words.get(static_cast<std::size_t>(target), std::span<std::uint64_t>(&value, 1));
          ++value;
          words.put(static_cast<std::size_t>(target), std::span<const std::uint64_t>(&value, 1));
          mutexes->unlock(target);  // completes the put: the next holder reads it
        } else if (!put_v) {
          words.fetch_add(static_cast<std::size_t>(target), 1);
        } else {
          const std::size_t base = static_cast<std::size_t>(target) * per_pe + static_cast<std::size_t>(rank) * area;
          for (int r = 0; r < p.regions; ++r) {
            for (std::size_t b = 0; b < region.size(); ++b) region[b] = static_cast<std::uint8_t>(rank + it + r + b);
            bytes.put(base + static_cast<std::size_t>(r) * 2 * region.size(), region);
          }
          bytes.fence();  // the vectored put is complete at its target
        }
      }
      busy += detail::seconds_since(start);
      if (put_v) {
        bytes.sync();
      } else {
        words.sync();
      }
    }
  });

  // Verify: each word holds the increments aimed at it (lock: the counter); each area its source's
  // last round; each get the target's word, which no get changed.
  bool ok = true;
  const int last = p.iterations - 1;
  const std::uint64_t aimed_ops = aimed_at(rank, pes, p.contention) * static_cast<std::uint64_t>(p.ops) *
                                  static_cast<std::uint64_t>(p.iterations);
  if (put_v) {
    const auto mine = bytes.local();
    for (int source = 0; source < pes; ++source) {
      const bool wrote = target_of(source, pes, p.contention) == rank && p.iterations > 0 && p.ops > 0;
      for (int r = 0; r < p.regions; ++r) {
        for (std::size_t b = 0; b < region.size(); ++b) {
          const std::size_t at = static_cast<std::size_t>(source) * area + static_cast<std::size_t>(r) * 2 * region.size() + b;
          const auto expected = wrote ? static_cast<std::uint8_t>(source + last + r + b) : std::uint8_t{0};
          ok = ok && mine[at] == expected;
        }
      }
    }
  } else if (get) {
    ok = wrong_gets == 0 && words.local()[0] == word_of(rank);
  } else {
    ok = words.local()[0] == aimed_ops;
  }

  add_times_and_setting(ctx, p, busy, m);
  const one_sided_stats st = put_v ? bytes.stats() : lock ? sum_of(mutexes->stats(), words.stats()) : words.stats();
  // Nothing but fetch-adds is combinable: a combined get, put or lock would be a bug.
  if (p.op != "fetch-add") ok = ok && st.requests_combined == 0;
  std::uint64_t contenders = 0;
  for (int source = 0; source < pes; ++source) contenders += target_of(source, pes, p.contention) == 0 ? 1 : 0;
  // Requests per operation: put-v one per region; lock a lock, a get, a put and an unlock.
  const std::uint64_t per_op_requests = put_v ? static_cast<std::uint64_t>(p.regions) : lock ? 4 : 1;
  const std::uint64_t aimed_at_pe0 = contenders * per_op_requests * static_cast<std::uint64_t>(p.ops) *
                                     static_cast<std::uint64_t>(p.iterations);
  // Request messages that reached PE 0's endpoint (helper mode: node 0's helper, which serves PE
  // 0 and reports its counters there). mpi_rma has no such count: MPI carries its operations.
  const bool rma = o.topology == request_topology::mpi_rma;
  const std::uint64_t at_target = ctx.allreduce(rank == 0 ? st.request_messages_received : 0, reduce_op::sum);

  m.verified = ok;
  m.stats.messages_sent = st.messages_sent;  // the record's generic fields, from the one-sided counters
  m.stats.inter_node_messages = st.request_messages_between_nodes;
  m.stats.items_forwarded = st.requests_forwarded;
  m.stats.buffer_bytes_peak = st.request_buffer_bytes_peak;
  m.buffer_bytes_bound = st.request_buffer_bytes;
  m.extra["topology"] = p.choice.topology;
  m.extra["progress"] = p.choice.progress;
  m.extra["combine"] = !p.no_combine;
  if (put_v) {
    m.extra["regions"] = p.regions;
    m.extra["region_bytes"] = p.region_bytes;
  }
  m.extra["requests_issued"] = ctx.allreduce(st.requests_sent, reduce_op::sum);
  // Operations on their own node's elements that PEs applied through its shared memory: no message.
  m.extra["applied_in_node"] = ctx.allreduce(st.applied_in_node, reduce_op::sum);
  m.extra["requests_aimed_at_pe0"] = aimed_at_pe0;
  m.extra["request_messages_between_nodes"] = ctx.allreduce(st.request_messages_between_nodes, reduce_op::sum);
  // null where there is nothing to say: mpi_rma's messages are MPI's own; at 0% contention no
  // request aims at PE 0.
  m.extra["request_messages_at_target"] = rma ? json(nullptr) : json(at_target);
  // Below 1: aggregation and combining at work (PE 0's own requests, and in helper mode those of
  // its node's PEs, reach it without a message).
  m.extra["target_messages_per_request"] =
      rma || aimed_at_pe0 == 0 ? json(nullptr) : json(static_cast<double>(at_target) / static_cast<double>(aimed_at_pe0));
  m.extra["requests_combined"] = ctx.allreduce(st.requests_combined, reduce_op::sum);
  // Replies retrace the route: PE 0's endpoint replies to the endpoints its requests came from
  // (null for mpi_rma: MPI's own).
  m.extra["reply_peers_at_target"] = rma ? json(nullptr) : json(ctx.allreduce(rank == 0 ? st.reply_peers : 0, reduce_op::sum));
  m.extra["replies_forwarded"] = ctx.allreduce(st.replies_forwarded, reduce_op::sum);
  m.extra["links_max"] = ctx.allreduce(st.links, reduce_op::max);
  m.extra["request_buffer_bytes_per_pe"] = ctx.allreduce(st.request_buffer_bytes, reduce_op::max);
  m.extra["request_buffer_bytes_peak"] = ctx.allreduce(st.request_buffer_bytes_peak, reduce_op::max);
  return m;
}

const bool registered = register_kernel({
    .name = "hotspot",
    .summary = "HiCOO hot spot: one-sided fetch-add, vectored put, get or lock, a share of PEs aiming at PE 0",
    .item_sizes = {sizeof(std::uint64_t)},
    .run = run_hotspot,
    .own_options =
        apps::option_table{
          {.names = "--op",
           .help = "fetch-add (default), put-v (a noncontiguous put, then fence), get (a blocking get of "
                   "the target's word) or lock (lock the target's mutex, get and put its counter, unlock)",
           .target = &params.op,
           .check = apps::one_of_names{{"fetch-add", "put-v", "get", "lock"}},
           .type_name = "OP"},
          integer_option("--contention", "percent of PEs aiming at PE 0 (default 100)",
                         &params.contention, 0, 100, "C", "a percentage"),
          integer_option("--ops", "operations between two sync()s (default 10)", &params.ops, 1, 1'000'000, "N"),
          integer_option("--iterations", "rounds of --ops operations (default 100)",
                         &params.iterations, 1, 1'000'000, "N"),
          integer_option("--regions", "put-v: regions per vectored put (default 8)", &params.regions, 1, 4096, "N"),
          integer_option("--region-bytes", "put-v: bytes per region (default 64)",
                         &params.region_bytes, 1, 1 << 20, "S"),
        } + one_sided_options_of(params.choice) + apps::option_table{
          {.names = "--no-combine",
           .help = "do not combine requests for one word (fetch-add; other ops have nothing to combine)",
           .target = &params.no_combine,
           .kind = apps::option_kind::repeatable_flag},
          integer_option("--request-buffer-bytes", "request aggregation per link (default 16384)",
                         &params.buffer_bytes, 256, std::int64_t{1} << 30, "B", "bytes"),
          integer_option("--request-flush-us", "partial request buffers go after U us (default 10)",
                         &params.flush_us, 0, 60'000'000, "U", "microseconds"),
        },
    .default_items = [] { return std::uint64_t{1000}; },
    .check =
        [](const options& opt) {
          if (opt.route == scheme::mpi_raw && params.op == "put-v")
            throw option_error("--op", params.op,
                               "fetch-add, get or lock with --scheme mpi-raw (their plain MPI versions)");
        },
    .mpi_raw = true,
});

}  // namespace

}  // namespace transit::bench
