// bipartite: many-to-many traffic over a fixed bipartite graph, as in EpiSimdemics (thesis 7.2.1:
// persons send visit messages to the locations they visit; 48-byte items with TRAM there).
//
// The graph is the job's, not the PE's: --persons persons and --locations locations in total,
// each block-distributed over the PEs (PE p owns persons [N p / P, N (p + 1) / P), locations
// likewise), and person i visits --degree locations, the j-th drawn uniformly from all locations
// by a hash of (--seed, i, j). The graph is the same at every PE count, so the work per PE falls as
// PEs grow (strong scaling), and the visits of a PE go to locations spread over the whole machine
// (a share 1/P of them stays on the PE).
//
// Each step every person sends one 48-byte visit item to each of its locations through the
// streamer (--scheme, --grid, --buffer-items as for the other kernels); the PE that owns the
// location counts the visit for that location. A step ends with quiesce() (no final marker per
// link: with direct aggregation that would be P - 1 messages per PE per step).
//
// Verified: every visit arrives at the PE that owns its location (checked on arrival) and intact
// (a check word), and each PE's checksums, reduced over PEs, match what the graph says: a sender
// sums a hash of (visit, destination PE) over what it sends, a receiver the same hash with its own
// rank over what it receives (a visit counted on the wrong PE or twice breaks the equality); a
// receiver sums hash(location) x visits counted over its locations, a sender hash(location) over
// the graph's edges from its persons, once per step; and the visit counts add up to persons x
// degree x steps.
#include <algorithm>
#include <string>
#include <vector>

#include "bench.hpp"

namespace transit::bench {

namespace {

/// One visit message, 48 bytes like TRAM's EpiSimdemics item (thesis 7.2.1).
struct visit {
  std::uint64_t person;    // global person index
  std::uint64_t location;  // global location index
  std::uint32_t step;
  std::uint32_t start;     // minute of the day the visit starts
  std::uint32_t duration;  // minutes
  std::uint32_t check;     // a hash of the fields above: catches corrupted items
  double infectivity;
  double susceptibility;
};
static_assert(sizeof(visit) == 48);

std::uint64_t persons = 65536;  // --persons: total over the job
std::uint64_t locations = 0;    // --locations: total; 0 = persons / 4 (at least 1)
std::uint64_t degree = 4;       // --degree: locations each person visits per step

struct graph {
  std::uint64_t persons, locations, degree, seed, pes;

  std::uint64_t first_person(std::uint64_t pe) const { return persons * pe / pes; }
  std::uint64_t first_location(std::uint64_t pe) const { return locations * pe / pes; }
  /// The PE whose block holds location `l`: the largest p with first_location(p) <= l.
  std::uint64_t owner(std::uint64_t l) const { return ((l + 1) * pes - 1) / locations; }
  /// Person i's j-th location: fixed by the seed, whatever the PE count.
  std::uint64_t location_of(std::uint64_t i, std::uint64_t j) const {
    const std::uint64_t r = rng::mix(seed ^ rng::mix(i * degree + j + 1));
    return ((r >> 32) * locations) >> 32;  // uniform in [0, locations): locations <= 2^32
  }
  visit make(std::uint64_t i, std::uint64_t j, std::uint64_t step) const {
    visit v{};
    v.person = i;
    v.location = location_of(i, j);
    v.step = static_cast<std::uint32_t>(step);
    const std::uint64_t r = rng::mix(seed + 0x5151 + i * degree + j);
    v.start = static_cast<std::uint32_t>(r % 1440);
    v.duration = static_cast<std::uint32_t>(1 + (r >> 16) % 480);
    v.check = check_of(v);
    v.infectivity = static_cast<double>((r >> 32) & 0xffff) * 0x1.0p-16;
    v.susceptibility = static_cast<double>((r >> 48) & 0xffff) * 0x1.0p-16;
    return v;
  }
  static std::uint32_t check_of(const visit& v) {
    return static_cast<std::uint32_t>(
        rng::mix(v.person * 0x9e3779b97f4a7c15ULL ^ v.location ^ (std::uint64_t{v.step} << 40) ^
                 (std::uint64_t{v.start} << 20) ^ v.duration));
  }
  /// The checksum term of a visit delivered on PE `pe`.
  static std::uint64_t term(const visit& v, std::uint64_t pe) {
    return rng::mix(v.person ^ (v.location << 24) ^ (std::uint64_t{v.step} << 52) ^ rng::mix(pe + 0x77));
  }
};

measurement run_bipartite(context& ctx, const setup& s) {
  const auto pes = static_cast<std::uint64_t>(ctx.size());
  const auto rank = static_cast<std::uint64_t>(ctx.rank());
  const graph g{persons, locations != 0 ? locations : std::max<std::uint64_t>(1, persons / 4), degree,
                rng::mix(s.opt.seed * 0x100000001b3ULL + 0xb1b), pes};
  const std::uint64_t my_first = g.first_person(rank), my_persons = g.first_person(rank + 1) - my_first;
  const std::uint64_t loc_first = g.first_location(rank), my_locations = g.first_location(rank + 1) - loc_first;
  const auto steps = static_cast<std::uint64_t>(s.steps);

  std::vector<std::uint64_t> visits_at(my_locations, 0);  // this PE's locations: visits counted
  std::uint64_t received = 0, received_sum = 0, misplaced = 0, corrupt = 0;
  std::uint64_t sent = 0, sent_sum = 0;
  streamer<visit> stream(ctx, s.stream, [&](const visit& v) {
    ++received;
    received_sum += graph::term(v, rank);
    if (v.location < loc_first || v.location - loc_first >= my_locations) {
      ++misplaced;
      return;
    }
    corrupt += v.check != graph::check_of(v);
    ++visits_at[v.location - loc_first];
  });

  progress_bar bar(ctx, "bipartite", my_persons * g.degree * steps);
  std::vector<double> step_seconds;
  measurement m;
  m.seconds = measure_steps(ctx, steps, step_seconds, [&](std::uint64_t step) {
    std::uint64_t i = 0;
    for (std::uint64_t p = my_first; p < my_first + my_persons; ++p) {
      for (std::uint64_t j = 0; j < g.degree; ++j, ++i) {
        const visit v = g.make(p, j, step);
        const std::uint64_t dest = g.owner(v.location);
        ++sent;
        sent_sum += graph::term(v, dest);
        stream.insert(v, static_cast<int>(dest));
        if (poll_due(i)) stream.progress();
        bar.update(step * my_persons * g.degree + i);
      }
    }
    stream.quiesce();
  });

  // The graph's side of the count per location: each sender adds hash(location) per visit sent
  // over all steps; each receiver adds hash(location) x count over its locations. Equal sums, with
  // the counts and checksums above, mean every location counted exactly the visits the graph gives it.
  std::uint64_t sent_locations = 0, counted_locations = 0, counted = 0;
  for (std::uint64_t p = my_first; p < my_first + my_persons; ++p)
    for (std::uint64_t j = 0; j < g.degree; ++j) sent_locations += rng::mix(g.location_of(p, j) + 0x10c) * steps;
  for (std::uint64_t l = 0; l < my_locations; ++l) {
    counted += visits_at[l];
    counted_locations += rng::mix(loc_first + l + 0x10c) * visits_at[l];
  }
  const std::uint64_t total_sent = ctx.allreduce(sent, reduce_op::sum);
  const bool ok = ctx.allreduce(received, reduce_op::sum) == total_sent && total_sent == g.persons * g.degree * steps &&
                  ctx.allreduce(counted, reduce_op::sum) == total_sent &&
                  ctx.allreduce(received_sum, reduce_op::sum) == ctx.allreduce(sent_sum, reduce_op::sum) &&
                  ctx.allreduce(counted_locations, reduce_op::sum) == ctx.allreduce(sent_locations, reduce_op::sum) &&
                  ctx.allreduce(misplaced + corrupt, reduce_op::sum) == 0;
  m.verified = ok;
  // Items per PE: the job's visits over its PEs (PEs own blocks that differ by at most one person).
  m.items_per_pe = static_cast<double>(total_sent) / static_cast<double>(pes);
  m.stats = stream.stats();
  m.buffer_bytes_bound = buffer_bound(ctx, stream.current_options(), stream.stats(), sizeof(visit));
  add_step_fields(ctx, s, stream, step_seconds, m);
  m.extra["persons"] = g.persons;
  m.extra["locations"] = g.locations;
  m.extra["degree"] = g.degree;
  m.extra["visits_per_step"] = g.persons * g.degree;
  m.extra["seconds_per_step"] = m.seconds / static_cast<double>(steps);
  m.extra["max_visits_per_pe"] = ctx.allreduce(my_persons, reduce_op::max) * g.degree;
  return m;
}

const bool registered = register_kernel({
    .name = "bipartite",
    .summary = "persons send 48-byte visits to locations over a fixed bipartite graph (EpiSimdemics, thesis 7.2.1)",
    .item_sizes = {sizeof(visit)},
    .run = run_bipartite,
    .own_options =
        {
          positive_count_option("--persons",
                                "persons in the whole job, block-distributed over the PEs (default 65536); the graph is "
                                "the same at every PE count (strong scaling)",
                                &persons, "N"),
          {.names = "--locations",
           .help = "locations in the whole job, block-distributed (default 0: persons / 4, at least 1)",
           .target = &locations,
           .check = apps::integer_range{0, std::uint64_t{1} << 32, "an integer in [0, 2^32]"},
           .type_name = "L"},
          integer_option("--degree",
                         "locations each person visits, one 48-byte visit item each per step, drawn uniformly "
                         "over all locations (default 4)",
                         &degree, 1, 1024, "D"),
        },
    .footer =
        "Each step every person sends one visit to each of its locations; the owner of the location counts it.\n"
        "The step ends with quiesce(). Items per PE = persons x degree / PEs (no --items-per-pe).\n"
        "Verified: every visit reaches its location's PE intact, and the counts per location and the\n"
        "checksums, summed over PEs, match the graph.",
    .check =
        [](const options& opt) {
          if (opt.items_per_pe != 0)
            throw option_error(
                "--items-per-pe", std::to_string(opt.items_per_pe),
                "no --items-per-pe for bipartite (the graph sets the work: --persons x --degree over the PEs)");
          if (persons * degree > std::uint64_t{1} << 40)
            throw option_error("--degree", std::to_string(degree),
                              "at most " + std::to_string((std::uint64_t{1} << 40) / persons) + " with --persons " +
                                  std::to_string(persons) + " (at most 2^40 visits per step)");
        },
    .steps = true,
});

}  // namespace

}  // namespace transit::bench
