// sparse_exchange, every method: every payload checked by content (source, destination, run and
// position stamped into each item), on random sparse, dense and one-sided patterns, with empty
// parcels, self-sends and several parcels to one peer; repeated runs with changing patterns;
// automatic's agreement and re-choice; the neighbourhood graph's reuse; bad input.
#include <gtest/gtest.h>

#include <algorithm>
#include <array>
#include <cstdlib>
#include <functional>
#include <random>
#include <set>
#include <string>

#include "test_support.hpp"
#include "transit/detail/exchange/selection.hpp"
#include "transit/detail/runtime/context_access.hpp"

namespace {

using namespace transit;
using transit::testing::run_spmd;

struct stamp {
  std::int32_t source;
  std::int32_t dest;
  std::uint32_t run;
  std::uint32_t index;
  friend bool operator==(const stamp&, const stamp&) = default;
};
using triple = std::array<unsigned char, 3>;  // 3-byte items: records of odd lengths, padded

std::uint64_t mix(std::uint64_t x) {  // splitmix64
  x += 0x9e3779b97f4a7c15ull;
  x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ull;
  x = (x ^ (x >> 27)) * 0x94d049bb133111ebull;
  return x ^ (x >> 31);
}

template <class T>
T item_for(int source, int dest, std::uint32_t run, std::uint32_t index);
template <>
stamp item_for<stamp>(int source, int dest, std::uint32_t run, std::uint32_t index) {
  return {source, dest, run, index};
}
template <>
triple item_for<triple>(int source, int dest, std::uint32_t run, std::uint32_t index) {
  const auto h = mix((std::uint64_t(source) << 40) ^ (std::uint64_t(dest) << 20) ^ (std::uint64_t(run) << 50) ^ index);
  return {static_cast<unsigned char>(h), static_cast<unsigned char>(h >> 8), static_cast<unsigned char>(h >> 16)};
}

/// One parcel of a pattern: peer and item count (0: an empty parcel).
struct spec {
  int peer;
  std::uint32_t items;
};
/// The parcels PE `source` sends in run `run`; every PE can evaluate any PE's list.
using pattern = std::function<std::vector<spec>(int source, int size, std::uint32_t run)>;

pattern random_sparse(std::uint64_t seed, std::uint32_t max_items) {
  return [=](int source, int size, std::uint32_t run) {
    std::mt19937_64 rng(mix(seed ^ mix(std::uint64_t(source) * 1000003u + run)));
    std::vector<spec> parcels(rng() % 6);  // 0 to 5 parcels; peers may repeat, self included
    for (auto& p : parcels) {
      p.peer = static_cast<int>(rng() % static_cast<std::uint64_t>(size));
      p.items = rng() % 5 == 0 ? 0 : static_cast<std::uint32_t>(1 + rng() % max_items);
    }
    return parcels;
  };
}

pattern dense(std::uint32_t items) {
  return [=](int source, int size, std::uint32_t run) {
    std::vector<spec> parcels;
    for (int p = 0; p < size; ++p) parcels.push_back({p, items + static_cast<std::uint32_t>((source + p + run) % 3)});
    return parcels;
  };
}

// PE 0 sends nothing and receives from everyone; the others also send to their neighbour.
pattern silent_zero() {
  return [](int source, int size, std::uint32_t run) {
    std::vector<spec> parcels;
    if (source == 0) return parcels;
    parcels.push_back({0, 1 + (static_cast<std::uint32_t>(source) + run) % 4});
    parcels.push_back({(source + 1) % size, 2});
    return parcels;
  };
}

// Several parcels to one peer (concatenated in order), empty ones between them, and to self.
pattern concatenated() {
  return [](int source, int size, std::uint32_t) {
    const int next = (source + 1) % size;
    return std::vector<spec>{{next, 3}, {source, 1}, {next, 0}, {next, 2}, {source, 0}, {source, 4}, {next, 1}};
  };
}

// Fixed volume per PE: `items` to each of two ring neighbours, and some to itself.
pattern ring(std::uint32_t items) {
  return [=](int source, int size, std::uint32_t) {
    return std::vector<spec>{{(source + 1) % size, items}, {source, 2}, {(source + 3) % size, items}};
  };
}

/// Runs one exchange of `p` and checks every item that arrives here.
template <class T>
void exchange_and_check(context& ctx, sparse_exchange<T>& x, const pattern& p, std::uint32_t run,
                                 const std::string& where) {
  const int me = ctx.rank(), size = ctx.size();
  std::vector<parcel<T>> out;
  std::vector<std::uint32_t> next_index(static_cast<std::size_t>(size), 0);
  for (const spec& s : p(me, size, run)) {
    parcel<T> q{s.peer, {}};
    for (std::uint32_t k = 0; k < s.items; ++k)
      q.items.push_back(item_for<T>(me, s.peer, run, next_index[static_cast<std::size_t>(s.peer)]++));
    out.push_back(std::move(q));
  }
  const auto in = x.run(std::move(out));

  std::vector<std::uint64_t> expected(static_cast<std::size_t>(size), 0);
  for (int s = 0; s < size; ++s) {
    for (const spec& q : p(s, size, run)) {
      if (q.peer == me) expected[static_cast<std::size_t>(s)] += q.items;
    }
  }
  std::size_t i = 0;
  for (int s = 0; s < size; ++s) {
    if (expected[static_cast<std::size_t>(s)] == 0) continue;
    ASSERT_LT(i, in.size()) << where << ": PE " << me << " got nothing from PE " << s;
    ASSERT_EQ(in[i].peer, s) << where << ": PE " << me << ", parcel " << i;
    ASSERT_EQ(in[i].items.size(), expected[static_cast<std::size_t>(s)]) << where << ": PE " << me << " from " << s;
    for (std::uint32_t k = 0; k < in[i].items.size(); ++k) {
      if (!(in[i].items[k] == item_for<T>(s, me, run, k)))
        FAIL() << where << ": PE " << me << ", item " << k << " from PE " << s << " is wrong";
    }
    ++i;
  }
  EXPECT_EQ(i, in.size()) << where << ": PE " << me << " got parcels from PEs that sent it nothing";
}

std::vector<exchange_method> methods_of(const context& ctx) {
  std::vector<exchange_method> m = {exchange_method::direct, exchange_method::crystal_router, exchange_method::grid,
                                    exchange_method::automatic};
  if (ctx.backend() == "mpi" && ctx.options().threads_per_rank == 1) {  // MPI's collectives: one PE per rank
    m.push_back(exchange_method::mpi_alltoallv);
    m.push_back(exchange_method::mpi_neighbor);
  }
  return m;
}

exchange_options with(exchange_method m) {
  exchange_options o;
  o.method = m;
  return o;
}

std::string name(exchange_method m) { return std::string(to_string(m)); }

void expect_agreement(context& ctx, exchange_method m, const std::string& where) {
  const int v = static_cast<int>(m);
  EXPECT_EQ(ctx.allreduce(v, reduce_op::min), ctx.allreduce(v, reduce_op::max)) << where;
}

TEST(Exchange, RandomSparsePatternsEveryMethod) {
  EXPECT_EQ(run_spmd([](context& ctx) {
              for (const exchange_method m : methods_of(ctx)) {
                sparse_exchange<stamp> x(ctx, with(m));
                const pattern p = random_sparse(7 + static_cast<std::uint64_t>(m), 40);
                for (std::uint32_t run = 0; run < 6; ++run)  // the pattern changes every run
                  exchange_and_check(ctx, x, p, run, name(m) + " run " + std::to_string(run));
                EXPECT_EQ(x.stats().runs, 6u);
                if (m != exchange_method::automatic) {
                  EXPECT_EQ(x.method(), m);
                }
                expect_agreement(ctx, x.method(), name(m));
              }
            }),
            0);
}

TEST(Exchange, OddSizedItems) {
  EXPECT_EQ(run_spmd([](context& ctx) {
              for (const exchange_method m : methods_of(ctx)) {
                sparse_exchange<triple> x(ctx, with(m));
                for (std::uint32_t run = 0; run < 3; ++run)
                  exchange_and_check(ctx, x, random_sparse(99, 13), run, name(m) + " triples");
              }
            }),
            0);
}

TEST(Exchange, DenseAllToAll) {
  EXPECT_EQ(run_spmd([](context& ctx) {
              for (const exchange_method m : methods_of(ctx)) {
                sparse_exchange<stamp> x(ctx, with(m));
                for (std::uint32_t run = 0; run < 2; ++run) exchange_and_check(ctx, x, dense(2), run, name(m) + " dense");
                const auto st = x.stats();
                const auto forwarded = ctx.allreduce(st.bytes_forwarded, reduce_op::sum);
                if (m == exchange_method::direct || m == exchange_method::mpi_alltoallv ||
                    m == exchange_method::mpi_neighbor) {
                  EXPECT_EQ(forwarded, 0u) << name(m);
                }
                if (m == exchange_method::direct) {
                  // A message to every other PE per run, and an acknowledgement back for each one
                  // received, unless the transport confirms delivery itself (the mpi transport with
                  // a PE per rank: NBX's synchronous sends).
                  const bool confirms = transit::detail::context_access::net(ctx).confirmable_bytes() > 0;
                  const auto others = static_cast<std::uint64_t>(ctx.size() - 1);
                  EXPECT_EQ(st.messages_sent, 2 * (confirms ? others : 2 * others)) << "confirmed: " << confirms;
                }
                if (m == exchange_method::crystal_router) {
                  // One message per stage, whatever the pattern; a PE of the smaller upper half
                  // may have one stage fewer than ceil(log2 P).
                  std::uint64_t stages = 0;
                  for (int bl = 0, n = ctx.size(); n > 1; ++stages) {
                    const int bh = bl + (n + 1) / 2;
                    if (ctx.rank() < bh) {
                      n = bh - bl;
                    } else {
                      n -= bh - bl;
                      bl = bh;
                    }
                  }
                  EXPECT_EQ(st.messages_sent, 2 * stages);
                  if (ctx.size() >= 3) {
                    EXPECT_GT(forwarded, 0u) << "records cross more than one stage";
                  }
                }
                if (m == exchange_method::grid) {
                  // One message per out-link of the router per run, empty or not.
                  const auto grid = virtual_grid::balanced(ctx.size(), 2);
                  const auto links = make_router(routing::grid, grid, ctx.machine())->out_links(ctx.rank()).size();
                  EXPECT_EQ(st.messages_sent, 2 * links);
                  if (grid.dims()[0] > 1 && grid.dims()[1] > 1) {
                    EXPECT_GT(forwarded, 0u) << "two-hop routes";
                  }
                }
              }
            }),
            0);
}

TEST(Exchange, SilentSenderAndConcatenation) {
  EXPECT_EQ(run_spmd([](context& ctx) {
              for (const exchange_method m : methods_of(ctx)) {
                sparse_exchange<stamp> x(ctx, with(m));
                for (std::uint32_t run = 0; run < 2; ++run) {
                  exchange_and_check(ctx, x, silent_zero(), run, name(m) + " silent PE 0");
                  exchange_and_check(ctx, x, concatenated(), run, name(m) + " concatenated");
                }
                // Nothing at all anywhere: every method still completes, and returns nothing.
                EXPECT_TRUE(x.run({}).empty()) << name(m);
                EXPECT_TRUE(x.run({parcel<stamp>{ctx.rank(), {}}}).empty()) << name(m);
              }
            }),
            0);
}

// Grids of every shape for method grid: 1-D, 3-D, and partially populated ones.
TEST(Exchange, GridShapes) {
  EXPECT_EQ(run_spmd([](context& ctx) {
              const int n = ctx.size();
              const std::vector<virtual_grid> grids = {virtual_grid::direct(n), virtual_grid::balanced(n, 3),
                                                       virtual_grid({2, (n + 2) / 2 + 1}, n),
                                                       virtual_grid::node_pe(ctx.machine())};
              for (const auto& g : grids) {
                exchange_options o = with(exchange_method::grid);
                o.grid = g;
                sparse_exchange<stamp> x(ctx, o);
                for (std::uint32_t run = 0; run < 3; ++run)
                  exchange_and_check(ctx, x, random_sparse(31, 20), run, "grid " + g.str());
              }
            }),
            0);
}

// Large parcels: messages above the transport's split size (lowered in the .split tests with
// TRANSIT_MAX_MESSAGE_BYTES) and collective calls in several rounds.
TEST(Exchange, LargeParcels) {
  EXPECT_EQ(run_spmd([](context& ctx) {
              const char* limit_text = std::getenv("TRANSIT_MAX_MESSAGE_BYTES");
              const std::uint64_t limit = limit_text != nullptr ? std::strtoull(limit_text, nullptr, 10) : 0;
              for (const exchange_method m : methods_of(ctx)) {
                if (m == exchange_method::automatic) continue;
                sparse_exchange<stamp> x(ctx, with(m));
                const pattern p = random_sparse(5, 3000);  // up to 48 KB per parcel
                exchange_and_check(ctx, x, p, 0, name(m) + " large");
                if (limit > 0 && (m == exchange_method::mpi_alltoallv || m == exchange_method::mpi_neighbor)) {
                  // Every record went in ceil(bytes / limit) calls: one message per call with data.
                  std::vector<std::uint64_t> bytes(static_cast<std::size_t>(ctx.size()), 0);
                  for (const spec& s : p(ctx.rank(), ctx.size(), 0)) {
                    if (s.peer != ctx.rank()) bytes[static_cast<std::size_t>(s.peer)] += s.items * sizeof(stamp);
                  }
                  std::uint64_t data_messages = 0, peers = 0;
                  for (const auto b : bytes) {
                    data_messages += (b + limit - 1) / limit;
                    peers += b > 0 ? 1 : 0;
                  }
                  const std::uint64_t count_messages =
                      m == exchange_method::mpi_alltoallv ? static_cast<std::uint64_t>(ctx.size() - 1) : peers;
                  EXPECT_EQ(x.stats().messages_sent, count_messages + data_messages) << name(m);
                }
              }
            }),
            0);
}

bool raced_none(const exchange_stats& st) {
  return std::none_of(st.candidates.begin(), st.candidates.end(), [](const exchange_candidate& c) { return c.raced; });
}

double chosen_seconds(const exchange_stats& st, exchange_method chosen) {
  for (const auto& c : st.candidates)
    if (c.method == chosen) return c.seconds;
  ADD_FAILURE() << "the chosen method is not among the candidates";
  return 0;
}

// The most exchanges one choice of automatic can take among `n` candidates: an untimed run and a
// scouting batch each, then every race and confirming round at the largest batch.
std::uint32_t max_choice_runs(std::size_t n) {
  using s = detail::exchange_selection;
  return static_cast<std::uint32_t>(n * (1 + s::scout_runs) + (s::race_rounds + s::confirm_rounds) * n * s::race_batch_runs);
}

TEST(Exchange, AutomaticAgreesAndRechoosesOnVolumeChange) {
  EXPECT_EQ(run_spmd([](context& ctx) {
              sparse_exchange<stamp> x(ctx);
              const std::size_t candidates = ctx.backend() == "mpi" && ctx.options().threads_per_rank == 1 ? 5 : 3;
              std::uint32_t run = 0;
              const pattern small = ring(5);
              while (x.stats().choices == 0) {
                exchange_and_check(ctx, x, small, run++, "automatic, choosing");
                ASSERT_LE(x.stats().trial_runs, max_choice_runs(candidates)) << "automatic never chose";
              }
              EXPECT_EQ(x.stats().trial_runs + x.stats().exploit_runs, run);
              expect_agreement(ctx, x.method(), "first choice");
              EXPECT_NE(x.method(), exchange_method::automatic);
              const auto st = x.stats();
              ASSERT_EQ(st.candidates.size(), candidates);
              std::size_t raced = 0;
              for (const auto& c : st.candidates) {
                EXPECT_GT(c.seconds, 0.0) << name(c.method);
                EXPECT_EQ(ctx.allreduce(c.seconds, reduce_op::min), ctx.allreduce(c.seconds, reduce_op::max))
                    << "every PE sees the same times";
                raced += c.raced ? 1 : 0;
                if (c.method == x.method()) {
                  EXPECT_TRUE(c.raced || raced_none(st)) << "the choice was raced";
                }
              }
              // The fastest of the finalists (the confirming rounds'), else of the raced.
              const bool confirmed = std::any_of(st.candidates.begin(), st.candidates.end(),
                                                 [](const exchange_candidate& c) { return c.confirmed; });
              for (const auto& c : st.candidates) {
                if (c.method == x.method()) {
                  EXPECT_TRUE(c.confirmed || !confirmed) << "the choice was a finalist";
                }
                if (confirmed ? c.confirmed : c.raced || raced == 0) {
                  EXPECT_LE(chosen_seconds(st, x.method()), c.seconds) << "chose the fastest: " << name(c.method);
                }
              }
              // Same volume: no re-choice.
              for (int i = 0; i < 3; ++i) exchange_and_check(ctx, x, small, run++, "automatic, settled");
              EXPECT_EQ(x.stats().choices, 1u);
              if (ctx.size() == 1) return;  // nothing ever leaves the PE: the volume is always 0
              const auto trials = x.stats().trial_runs;
              // 5x the volume: the run that sees it triggers timing from the next run on.
              const pattern large = ring(25);
              exchange_and_check(ctx, x, large, run++, "automatic, volume changed");
              EXPECT_EQ(x.stats().trial_runs, trials);
              // Bounded by the schedule, not by a count that a slow build (ASan) once exceeded:
              // two choices whose candidates all reach the confirming rounds take 2600 runs.
              while (x.stats().choices == 1) {
                exchange_and_check(ctx, x, large, run++, "automatic, re-choosing");
                ASSERT_LE(x.stats().trial_runs - trials, max_choice_runs(candidates)) << "automatic never re-chose";
              }
              EXPECT_GT(x.stats().trial_runs, trials + candidates) << "scouted every candidate again";
              EXPECT_EQ(x.stats().choices, 2u);
              expect_agreement(ctx, x.method(), "second choice");
            }),
            0);
}

TEST(Exchange, NeighborGraphBuiltOncePerPattern) {
  EXPECT_EQ(run_spmd([](context& ctx) {
              if (ctx.backend() != "mpi") GTEST_SKIP() << "mpi backend only";
              if (ctx.options().threads_per_rank > 1) GTEST_SKIP() << "one PE per rank only (its refusal: Exchange.BadInput)";
              sparse_exchange<stamp> x(ctx, with(exchange_method::mpi_neighbor));
              const pattern fixed = random_sparse(3, 10);
              for (std::uint32_t run = 0; run < 3; ++run) exchange_and_check(ctx, x, fixed, 0, "fixed pattern");
              EXPECT_EQ(x.stats().neighbor_graphs, 1u);
              exchange_and_check(ctx, x, random_sparse(4, 10), 1, "new pattern");
              exchange_and_check(ctx, x, random_sparse(4, 10), 1, "new pattern again");
              // Every PE rebuilds when any PE's destinations changed (unless none did anywhere).
              const auto graphs = x.stats().neighbor_graphs;
              EXPECT_EQ(ctx.allreduce(graphs, reduce_op::min), ctx.allreduce(graphs, reduce_op::max));
              EXPECT_LE(graphs, 2u);
            }),
            0);
}

// exchange_options::fixed_pattern: the same byte counts to the same PEs every run, new items each
// run (stamped with the run). mpi_alltoallv and mpi_neighbor exchange counts in the first run only; every method
// refuses a changed pattern on the PE that changed it, before communicating.
TEST(Exchange, FixedPatternCountsOnce) {
  EXPECT_EQ(run_spmd([](context& ctx) {
              const int me = ctx.rank(), size = ctx.size();
              constexpr std::uint32_t runs = 5;
              for (const exchange_method m : methods_of(ctx)) {
                exchange_options o = with(m);
                o.fixed_pattern = true;
                sparse_exchange<stamp> x(ctx, o);
                // Up to 400 stamps per parcel: records above the 4 KiB calls of exchange_test.pieces.
                const pattern sizes = random_sparse(31 + static_cast<std::uint64_t>(m), 400);
                const pattern fixed = [sizes](int source, int n, std::uint32_t) { return sizes(source, n, 0); };
                for (std::uint32_t run = 0; run < runs; ++run)
                  exchange_and_check(ctx, x, fixed, run, name(m) + " fixed, run " + std::to_string(run));
                if (m == exchange_method::direct) {
                  // Consensus (acknowledgements, allreduce) in the first run only: each later run
                  // sends exactly one message per destination with items.
                  std::set<int> destinations;
                  for (const spec& parcel : fixed(me, size, 0))
                    if (parcel.peer != me && parcel.items > 0) destinations.insert(parcel.peer);
                  sparse_exchange<stamp> once(ctx, o);
                  exchange_and_check(ctx, once, fixed, 0, "direct fixed, first run");
                  const std::uint64_t first = once.stats().messages_sent;
                  for (std::uint32_t run = 1; run < runs; ++run)
                    exchange_and_check(ctx, once, fixed, run, "direct fixed, run " + std::to_string(run));
                  EXPECT_EQ(once.stats().messages_sent - first, (runs - 1) * destinations.size()) << "PE " << me;
                }
                if (m == exchange_method::mpi_alltoallv || m == exchange_method::mpi_neighbor) {
                  // The count messages once instead of every run (mpi_alltoallv: P - 1; mpi_neighbor:
                  // one per other PE this PE has items for); the data as without the promise (one
                  // message per other PE with items, per round of the pieces' size).
                  sparse_exchange<stamp> every_run(ctx, with(m));
                  for (std::uint32_t run = 0; run < runs; ++run)
                    exchange_and_check(ctx, every_run, fixed, run, "counts every run, run " + std::to_string(run));
                  std::set<int> destinations;
                  for (const spec& parcel : fixed(me, size, 0))
                    if (parcel.peer != me && parcel.items > 0) destinations.insert(parcel.peer);
                  const std::uint64_t counts_per_run =
                      m == exchange_method::mpi_alltoallv ? static_cast<std::uint64_t>(size - 1) : destinations.size();
                  EXPECT_EQ(every_run.stats().messages_sent - x.stats().messages_sent, (runs - 1) * counts_per_run)
                      << name(m) << ", PE " << me;
                }
                if (size == 1) continue;  // no other PE: nothing to change
                // Every PE adds one item for its neighbour: every PE refuses, nothing was sent.
                const pattern changed = [fixed](int source, int n, std::uint32_t run) {
                  auto parcels = fixed(source, n, run);
                  parcels.push_back({(source + 1) % n, 1});
                  return parcels;
                };
                try {
                  exchange_and_check(ctx, x, changed, runs, name(m) + " changed");
                  ADD_FAILURE() << name(m) << ": a changed pattern accepted with fixed_pattern";
                } catch (const std::invalid_argument& e) {
                  EXPECT_NE(std::string(e.what()).find("fixed_pattern"), std::string::npos) << e.what();
                  EXPECT_NE(std::string(e.what()).find("to PE " + std::to_string((me + 1) % size)), std::string::npos)
                      << e.what();
                }
                exchange_and_check(ctx, x, fixed, runs + 1, name(m) + " fixed after the refusal");
                EXPECT_EQ(x.stats().runs, runs + 1) << name(m);
              }
            }),
            0);
}

// A fixed pattern's direct runs without consensus: PEs that receive nothing finish each run as
// soon as their sends complete and may run many runs ahead of PE 0, which receives from all; their
// later runs' messages wait (parked) at PE 0 for its runs, each item checked against its run.
TEST(Exchange, FixedPatternDirectSendersRunAhead) {
  EXPECT_EQ(run_spmd([](context& ctx) {
              exchange_options o = with(exchange_method::direct);
              o.fixed_pattern = true;
              sparse_exchange<stamp> x(ctx, o);
              const pattern fan_in = [](int source, int, std::uint32_t) {
                return source == 0 ? std::vector<spec>{} : std::vector<spec>{{0, 1 + static_cast<std::uint32_t>(source) % 5}};
              };
              for (std::uint32_t run = 0; run < 40; ++run)
                exchange_and_check(ctx, x, fan_in, run, "fan-in, run " + std::to_string(run));
              EXPECT_EQ(x.stats().runs, 40u);
            }),
            0);
}

TEST(Exchange, BadInput) {
  EXPECT_EQ(run_spmd([](context& ctx) {
              sparse_exchange<int> x(ctx, with(exchange_method::direct));
              const int size = ctx.size();
              EXPECT_THROW(x.run({parcel<int>{size, {1}}}), std::out_of_range);
              EXPECT_THROW(x.run({parcel<int>{-1, {1}}}), std::out_of_range);
              try {
                x.run({parcel<int>{0, {1}}, parcel<int>{size + 3, {}}});
                ADD_FAILURE() << "no exception for peer " << size + 3;
              } catch (const std::out_of_range& e) {
                EXPECT_NE(std::string(e.what()).find(std::to_string(size + 3)), std::string::npos) << e.what();
              }
              // Still usable after refusing: nothing was sent.
              const auto in = x.run({parcel<int>{(ctx.rank() + 1) % size, {ctx.rank()}}});
              ASSERT_EQ(in.size(), 1u);
              EXPECT_EQ(in[0].peer, (ctx.rank() + size - 1) % size);
              EXPECT_EQ(in[0].items, std::vector<int>{(ctx.rank() + size - 1) % size});

              exchange_options other = with(exchange_method::grid);
              other.grid = virtual_grid::balanced(size + 1, 2);
              EXPECT_THROW(sparse_exchange<int>(ctx, other), std::invalid_argument);
              if (ctx.backend() == "mpi" && ctx.options().threads_per_rank > 1) {
                // PE threads in MPI ranks: MPI's collectives run one PE per rank, so they refuse.
                for (const auto m : {exchange_method::mpi_alltoallv, exchange_method::mpi_neighbor}) {
                  try {
                    sparse_exchange<int> y(ctx, with(m));
                    ADD_FAILURE() << name(m) << " accepted with PE threads per rank";
                  } catch (const std::invalid_argument& e) {
                    EXPECT_NE(std::string(e.what()).find("PE threads per rank"), std::string::npos) << e.what();
                  }
                }
              }
              if (ctx.backend() == "local") {
                for (const auto m : {exchange_method::mpi_alltoallv, exchange_method::mpi_neighbor}) {
                  try {
                    sparse_exchange<int> y(ctx, with(m));
                    ADD_FAILURE() << name(m) << " accepted on the local backend";
                  } catch (const std::invalid_argument& e) {
                    EXPECT_NE(std::string(e.what()).find(name(m)), std::string::npos) << e.what();
                  }
                }
              }
            }),
            0);
}

TEST(Exchange, EnvironmentReplacesAutomatic) {
  setenv("TRANSIT_EXCHANGE_METHOD", "crystal_router", 1);
  EXPECT_EQ(run_spmd([](context& ctx) {
              sparse_exchange<stamp> x(ctx);
              sparse_exchange<stamp> y(ctx, with(exchange_method::direct));  // an explicit method stays
              for (std::uint32_t run = 0; run < 2; ++run) {
                exchange_and_check(ctx, x, random_sparse(17, 8), run, "environment");
                exchange_and_check(ctx, y, random_sparse(17, 8), run, "explicit");
              }
              EXPECT_EQ(x.method(), exchange_method::crystal_router);
              EXPECT_EQ(x.stats().trial_runs, 0u);
              EXPECT_EQ(y.method(), exchange_method::direct);
            }),
            0);
  setenv("TRANSIT_EXCHANGE_METHOD", "crystal", 1);
  EXPECT_EQ(run_spmd([](context& ctx) {
              try {
                sparse_exchange<stamp> x(ctx);
                ADD_FAILURE() << "TRANSIT_EXCHANGE_METHOD=crystal accepted";
              } catch (const std::invalid_argument& e) {
                EXPECT_NE(std::string(e.what()).find("TRANSIT_EXCHANGE_METHOD"), std::string::npos) << e.what();
              }
            }),
            0);
  unsetenv("TRANSIT_EXCHANGE_METHOD");
}

TEST(ExchangeMethod, NamesRoundTrip) {
  for (const auto m : {exchange_method::automatic, exchange_method::direct, exchange_method::crystal_router,
                       exchange_method::grid, exchange_method::mpi_alltoallv, exchange_method::mpi_neighbor})
    EXPECT_EQ(parse_exchange_method(to_string(m)), m);
  EXPECT_THROW(parse_exchange_method("alltoallv"), std::invalid_argument);
}

}  // namespace
