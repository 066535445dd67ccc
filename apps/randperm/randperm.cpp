#include "randperm/randperm.hpp"

#include <cinttypes>
#include <cstdio>
#include <deque>
#include <stdexcept>
#include <string>
#include <utility>

#include "common/bale_styles.hpp"
#include "common/bale_timing.hpp"
#include "common/ranf.hpp"

namespace transit::apps {

namespace {

constexpr std::int64_t rand_limit = std::int64_t{1} << 51;  // bale's LGP_RAND_MAX: draws stay below it
constexpr std::int64_t empty_slot = -1;                    // bale's unclaimed target slot

/// A dart on its way: its slot's offset on the slot's PE, and the dart (the entry it carries).
struct dart {
  std::int64_t slot;
  std::int64_t value;
};

void check_size(std::int64_t n, const char* style) {
  if (n < 0 || n >= rand_limit / 2)
    throw std::invalid_argument(std::string(style) + ": a permutation of " + std::to_string(n) +
                                " entries, expected from 0 to 2^50 - 1 (bale draws its 2N slots below 2^51)");
}

/// What every style starts from on this PE: its darts (bale's lperm[i] = i * P + PE), its part of
/// the 2N target slots (all empty), and its random stream (bale's int seed, lgp_rand_seed).
struct throw_state {
  std::vector<std::int64_t> darts;
  std::vector<std::int64_t> target;
  knuth_ranf random;
  std::int64_t slots;  // M = 2N

  throw_state(context& ctx, std::int64_t n, std::int64_t seed)
      : darts(static_cast<std::size_t>(cyclic_local_count(n, ctx.rank(), ctx.size()))),
        target(static_cast<std::size_t>(cyclic_local_count(2 * n, ctx.rank(), ctx.size())), empty_slot),
        random(knuth_ranf::for_pe(static_cast<std::int32_t>(seed), ctx.rank())),
        slots(2 * n) {
    for (std::size_t i = 0; i < darts.size(); ++i) darts[i] = static_cast<std::int64_t>(i) * ctx.size() + ctx.rank();
  }

  /// Local: the claimed slots' darts in slot order (bale's squeeze of ltarget).
  std::vector<std::int64_t> claimed() const {
    std::vector<std::int64_t> out;
    out.reserve(darts.size());
    for (const std::int64_t d : target)
      if (d != empty_slot) out.push_back(d);
    return out;
  }
};

/// Collective: bale's sanity check after the throws: every dart landed once.
void check_total(context& ctx, std::size_t claimed, std::int64_t n, const char* style) {
  const std::int64_t total = ctx.allreduce(static_cast<std::int64_t>(claimed), reduce_op::sum);
  if (total != n)
    throw std::logic_error(std::string(style) + ": " + std::to_string(total) + " darts landed, expected " + std::to_string(n));
}

/// Collective: whether every PE's `mine_done` is true (bale's exstack_proceed, negated).
bool all_done(context& ctx, bool mine_done) { return ctx.allreduce(mine_done ? 0 : 1, reduce_op::sum) == 0; }

}  // namespace

std::vector<std::int64_t> rand_perm_global_array(context& ctx, std::int64_t n, std::int64_t seed) {
  check_size(n, "rand_perm_global_array");
  throw_state s(ctx, n, seed);
  global_array<std::int64_t> target(ctx, static_cast<std::size_t>(2 * n), array_layout::cyclic);
  global_array<std::int64_t> perm(ctx, static_cast<std::size_t>(n), array_layout::cyclic);
  for (std::int64_t& slot : target.local()) slot = empty_slot;
  ctx.barrier();
  // Each throw is a compare_exchange_nb. One whose slot is on this PE's node is done at once
  // (test() is true without a poll), and a miss is thrown again at once, so throws on one node
  // draw their slots in bale's order (one PE: bale's permutation). The others fly, up to
  // `in_flight_limit` of them, instead of waiting a round trip each; a miss among them is thrown
  // again when it is retired, oldest first.
  constexpr std::size_t in_flight_limit = 1024;
  struct flying {
    std::int64_t dart;
    std::int64_t old = empty_slot;
    request done;
  };
  std::deque<flying> in_flight;  // a deque: each old value's address stays put while it flies
  const auto throw_until_landed_or_flying = [&](std::int64_t d) {
    for (;;) {
      flying& f = in_flight.emplace_back(flying{d, empty_slot, request{}});
      f.done = target.compare_exchange_nb(static_cast<std::size_t>(s.random.next_int(s.slots)), empty_slot, d, &f.old);
      if (!f.done.test()) return;  // flying
      const bool landed = f.old == empty_slot;
      in_flight.pop_back();
      if (landed) return;
    }
  };
  const auto retire_oldest = [&] {
    in_flight.front().done.wait();
    const flying f = std::move(in_flight.front());
    in_flight.pop_front();
    if (f.old != empty_slot) throw_until_landed_or_flying(f.dart);
  };
  for (const std::int64_t d : s.darts) {
    throw_until_landed_or_flying(d);
    while (in_flight.size() >= in_flight_limit) retire_oldest();
  }
  while (!in_flight.empty()) retire_oldest();
  target.sync();
  std::vector<std::int64_t> landed;
  for (const std::int64_t d : target.local())
    if (d != empty_slot) landed.push_back(d);
  // My darts go to the permutation from my first place on (bale's lgp_prior_add, then a put each).
  const auto first = static_cast<std::uint64_t>(ctx.exclusive_scan(static_cast<std::int64_t>(landed.size())));
  std::vector<std::uint64_t> places(landed.size());
  for (std::size_t i = 0; i < places.size(); ++i) places[i] = first + i;
  perm.put(places, landed);
  perm.sync();
  const std::span<const std::int64_t> local = perm.local();
  return {local.begin(), local.end()};
}

std::vector<std::int64_t> rand_perm_exchange(context& ctx, std::int64_t n, std::int64_t seed, std::int64_t buf_cnt) {
  check_size(n, "rand_perm_exchange");
  if (buf_cnt < 1) throw std::invalid_argument("rand_perm_exchange: buf_cnt " + std::to_string(buf_cnt) + ", expected >= 1");
  const int pes = ctx.size();
  const auto limit = static_cast<std::size_t>(buf_cnt);
  throw_state s(ctx, n, seed);
  std::vector<std::int64_t>& lperm = s.darts;
  {
    sparse_exchange<dart> exchange(ctx);
    // bale's iend: darts [0, left) are landed or in flight, [left, size) still to throw; a
    // returned dart goes back just below `left`, to be thrown again first.
    std::size_t left = 0;
    while (!all_done(ctx, left == lperm.size())) {
      std::vector<parcel<dart>> outgoing(static_cast<std::size_t>(pes));
      for (int pe = 0; pe < pes; ++pe) outgoing[static_cast<std::size_t>(pe)].peer = pe;
      while (left < lperm.size()) {
        const std::int64_t r = s.random.next_int(s.slots);
        auto& items = outgoing[static_cast<std::size_t>(r % pes)].items;
        if (items.size() == limit) break;  // bale's refused push: the draw is lost
        items.push_back(dart{r / pes, lperm[left++]});
      }
      std::vector<parcel<dart>> arrived = exchange.run(std::move(outgoing));
      for (auto& in : arrived) {  // by source, in order: claim the slot or send the dart back
        std::size_t back = 0;
        for (const dart& d : in.items) {
          std::int64_t& slot = s.target[static_cast<std::size_t>(d.slot)];
          if (slot == empty_slot) slot = d.value;
          else in.items[back++] = d;
        }
        in.items.resize(back);
      }
      for (const auto& in : exchange.run(std::move(arrived)))
        for (const dart& d : in.items) lperm[--left] = d.value;
    }
  }
  const std::vector<std::int64_t> claimed = s.claimed();
  check_total(ctx, claimed.size(), n, "rand_perm_exchange");
  // Deal the darts out cyclically from this PE's first place, in rounds of at most buf_cnt per
  // destination; each PE appends what it receives in arrival order (by source), as bale's pops.
  sparse_exchange<std::int64_t> exchange(ctx);
  int pe = static_cast<int>(ctx.exclusive_scan(static_cast<std::int64_t>(claimed.size())) % pes);
  std::size_t i = 0, pos = 0;
  while (!all_done(ctx, i == claimed.size())) {
    std::vector<parcel<std::int64_t>> outgoing(static_cast<std::size_t>(pes));
    for (int p = 0; p < pes; ++p) outgoing[static_cast<std::size_t>(p)].peer = p;
    for (; i < claimed.size(); ++i) {
      auto& items = outgoing[static_cast<std::size_t>(pe)].items;
      if (items.size() == limit) break;
      items.push_back(claimed[i]);
      if (++pe == pes) pe = 0;
    }
    for (const auto& in : exchange.run(std::move(outgoing)))
      for (const std::int64_t d : in.items) lperm[pos++] = d;
  }
  return std::move(lperm);
}

std::vector<std::int64_t> rand_perm_streamer(context& ctx, std::int64_t n, std::int64_t seed) {
  check_size(n, "rand_perm_streamer");
  const int pes = ctx.size();
  throw_state s(ctx, n, seed);
  std::vector<std::int64_t> pending = s.darts;  // darts to throw in the coming round
  {
    streamer<std::int64_t> rejects(ctx, {}, [&pending](const std::int64_t& d) { pending.push_back(d); });
    streamer<dart> throws(ctx, {}, [&s, &rejects](const dart& d, int thrower) {
      std::int64_t& slot = s.target[static_cast<std::size_t>(d.slot)];
      if (slot == empty_slot) slot = d.value;
      else rejects.insert(d.value, thrower);
    });
    std::vector<std::int64_t> round;
    while (ctx.allreduce(static_cast<std::int64_t>(pending.size()), reduce_op::sum) != 0) {
      round.swap(pending);
      pending.clear();
      for (const std::int64_t d : round) {
        const std::int64_t r = s.random.next_int(s.slots);
        throws.insert(dart{r / pes, d}, static_cast<int>(r % pes));
      }
      throws.finish();  // every dart delivered, so every reject inserted
      rejects.finish();
    }
  }
  const std::vector<std::int64_t> claimed = s.claimed();
  check_total(ctx, claimed.size(), n, "rand_perm_streamer");
  // Each dart goes to its place first + i in the permutation: PE (first + i) % P, offset / P.
  std::vector<std::int64_t>& lperm = s.darts;
  streamer<dart> places(ctx, {}, [&lperm](const dart& d) { lperm[static_cast<std::size_t>(d.slot)] = d.value; });
  const std::int64_t first = ctx.exclusive_scan(static_cast<std::int64_t>(claimed.size()));
  for (std::size_t i = 0; i < claimed.size(); ++i) {
    const std::int64_t g = first + static_cast<std::int64_t>(i);
    places.insert(dart{g / pes, claimed[i]}, static_cast<int>(g % pes));
  }
  places.finish();
  return std::move(lperm);
}

bool is_perm(context& ctx, std::span<const std::int64_t> local, std::int64_t n) {
  const int pes = ctx.size(), me = ctx.rank();
  const auto share = static_cast<std::size_t>(cyclic_local_count(n, me, pes));
  std::int64_t errors = local.size() == share ? 0 : 1;
  std::vector<parcel<std::int64_t>> outgoing(static_cast<std::size_t>(pes));
  for (int pe = 0; pe < pes; ++pe) outgoing[static_cast<std::size_t>(pe)].peer = pe;
  for (const std::int64_t v : local) {
    if (v < 0 || v >= n) ++errors;
    else outgoing[static_cast<std::size_t>(v % pes)].items.push_back(v / pes);
  }
  sparse_exchange<std::int64_t> exchange(ctx);
  std::vector<char> seen(share, 0);  // bale's flag array, this PE's part
  for (const auto& in : exchange.run(std::move(outgoing)))
    for (const std::int64_t offset : in.items) seen[static_cast<std::size_t>(offset)] = 1;
  for (const char f : seen) errors += f == 0;
  return ctx.allreduce(errors, reduce_op::sum) == 0;
}

int randperm_main(context& ctx, const randperm_options& options, const std::string& command_line) {
  const int pes = ctx.size(), me = ctx.rank();
  const std::int64_t n = options.entries_total != 0 ? options.entries_total : options.entries_per_pe * pes;
  if (n >= rand_limit / 2) {
    if (me == 0)
      std::fprintf(stderr, "transit: error: --l_perm_size (-n): got '%" PRId64 "', expected at most %" PRId64
                   " entries per PE on %d PEs (2N must stay below 2^51, bale's limit for its draws)\n",
                   options.entries_per_pe, (rand_limit / 2 - 1) / pes, pes);
    return 2;
  }
  bale_report report(ctx, options.std, "randperm", command_line);
  if (!report.opened()) return 2;
  report.write_int("num_rows_total", n);
  report.write_int("num_rows_per_pe", cyclic_local_count(n, me, pes));  // PE 0's, as bale prints it
  report.write_std_options();

  const std::int64_t seed = options.std.seed + me;  // as bale's randperm passes it
  std::int64_t failed = 0;
  std::vector<std::int64_t> perm;
  bale_run_styles(
      ctx, report, options.std, -1.0,
      [&](std::int64_t bit) {
        return bale_timed(ctx, [&] {
          if (bit == agp_style) perm = rand_perm_global_array(ctx, n, seed);
          else if (bit == exstack_style) perm = rand_perm_exchange(ctx, n, seed, options.std.buf_cnt);
          else perm = rand_perm_streamer(ctx, n, seed);
        });
      },
      [&](std::int64_t bit) {
        if (is_perm(ctx, perm, n)) return;
        ++failed;
        if (me == 0) std::printf("\nERROR: rand_permp_%" PRId64 " failed!\n\n", bit);
      });
  if (failed != 0 && me == 0) std::fprintf(stderr, "BALE FAIL!!!!\n");
  report.finish();
  return failed == 0 ? 0 : 1;
}

}  // namespace transit::apps
