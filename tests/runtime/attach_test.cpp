// transit inside a program that owns MPI (issue 37): the program initialises MPI, splits its world,
// uses MPI itself before, between and after transit's work, and attaches transit sessions to its
// communicators. Run under mpirun at 1, 2, 3 and 4 ranks; every test is collective over the world.
#include <mpi.h>

#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <numeric>
#include <random>
#include <span>
#include <stdexcept>
#include <string>
#include <vector>

#include "transit/mpi.hpp"
#include "transit/transit.hpp"

namespace {

int world_rank() {
  int rank = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  return rank;
}

int world_size() {
  int size = 0;
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  return size;
}

// Ranks below half the world in group 0, the others in group 1 (one rank: group 0 alone).
MPI_Comm split_in_two() {
  MPI_Comm group = MPI_COMM_NULL;
  const int color = world_size() > 1 && world_rank() >= world_size() / 2 ? 1 : 0;
  MPI_Comm_split(MPI_COMM_WORLD, color, world_rank(), &group);
  return group;
}

// Updates of PE `pe` of a job: `count` table indices in [0, table), the same on every PE that
// recomputes them.
std::vector<std::uint64_t> updates_of(int pe, std::uint64_t seed, std::size_t count, std::uint64_t table) {
  std::mt19937_64 random(seed * 1000003u + static_cast<std::uint64_t>(pe));
  std::vector<std::uint64_t> out(count);
  for (auto& u : out) u = random() % table;
  return out;
}

// The histogram of `transit bench histogram` on `ctx`: each PE sends `count` increments to a table
// of table_per_pe entries per PE; checks every PE's slice against a recomputation from all PEs'
// updates, and the total over the job with MPI on `comm` (the program's own communicator), or
// with transit's allreduce when `comm` is MPI_COMM_NULL.
void histogram(transit::context& ctx, MPI_Comm comm, std::uint64_t seed, std::size_t count) {
  constexpr std::uint64_t table_per_pe = 1000;
  const std::uint64_t table = table_per_pe * static_cast<std::uint64_t>(ctx.size());
  std::vector<std::int64_t> mine(table_per_pe, 0);
  {
    transit::streamer<std::uint64_t> s(ctx, {}, [&](std::uint64_t index) { ++mine[index % table_per_pe]; });
    for (std::uint64_t index : updates_of(ctx.rank(), seed, count, table))
      s.insert(index, static_cast<int>(index / table_per_pe));
    s.finish();
  }
  std::vector<std::int64_t> expected(table_per_pe, 0);
  for (int pe = 0; pe < ctx.size(); ++pe)
    for (std::uint64_t index : updates_of(pe, seed, count, table))
      if (index / table_per_pe == static_cast<std::uint64_t>(ctx.rank())) {
        ++expected[index % table_per_pe];
      }
  EXPECT_EQ(mine, expected) << "PE " << ctx.rank();
  std::int64_t total = std::accumulate(mine.begin(), mine.end(), std::int64_t{0});
  if (comm == MPI_COMM_NULL) {
    total = ctx.allreduce(total, transit::reduce_op::sum);  // PE threads: MPI is the session's
  } else {
    MPI_Allreduce(MPI_IN_PLACE, &total, 1, MPI_INT64_T, MPI_SUM, comm);
  }
  EXPECT_EQ(total, static_cast<std::int64_t>(count) * ctx.size());
}

TEST(Attach, TwoGroupsRunTwoHistogramsAtOnce) {
  // The program's own MPI before transit.
  int ranks = 1;
  MPI_Allreduce(MPI_IN_PLACE, &ranks, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
  ASSERT_EQ(ranks, world_size());
  MPI_Comm group = split_in_two();
  int group_size = 0, group_rank = 0;
  MPI_Comm_size(group, &group_size);
  MPI_Comm_rank(group, &group_rank);
  {
    transit::session attached = transit::attach(group);
    transit::context& ctx = attached.pe();
    EXPECT_EQ(ctx.size(), group_size);
    EXPECT_EQ(ctx.rank(), group_rank);
    EXPECT_EQ(ctx.backend(), "mpi");
    histogram(ctx, group, 1, 20000);
    // The program's MPI between two steps of transit's work, on the same communicator.
    MPI_Barrier(group);
    histogram(ctx, group, 2, 5000);
  }
  // And after: the communicator is the program's, as it was.
  int after = 1;
  MPI_Allreduce(MPI_IN_PLACE, &after, 1, MPI_INT, MPI_SUM, group);
  EXPECT_EQ(after, group_size);
  MPI_Comm_free(&group);
}

TEST(Attach, OverlappingSessionsKeepTheirTrafficApart) {
  MPI_Comm group = split_in_two();
  transit::session world = transit::attach(MPI_COMM_WORLD);
  transit::session half = transit::attach(group);
  // Alternating steps of two jobs over the same ranks: each streamer sees only its own job's items.
  histogram(world.pe(), MPI_COMM_WORLD, 3, 4000);
  histogram(half.pe(), group, 4, 4000);
  histogram(world.pe(), MPI_COMM_WORLD, 5, 4000);
  half.close();
  world.close();
  EXPECT_THROW(static_cast<void>(world.pe()), std::logic_error);
  MPI_Comm_free(&group);
}

TEST(Attach, EveryLayerRunsOnTheProgramsCommunicator) {
  MPI_Comm group = split_in_two();
  transit::session attached = transit::attach(group);
  transit::context& ctx = attached.pe();
  const int p = ctx.size(), me = ctx.rank();

  // Active messages: each PE adds its rank + 1 on every PE.
  {
    static std::int64_t received;
    received = 0;
    transit::active_messages am(ctx);
    for (int dest = 0; dest < p; ++dest)
      am.async(dest, [](transit::active_messages&, std::int64_t v) { received += v; }, std::int64_t{me + 1});
    am.barrier();
    EXPECT_EQ(received, std::int64_t{p} * (p + 1) / 2);
  }
  // Sparse exchange: PE me sends (me, dest) to every dest.
  {
    transit::sparse_exchange<std::int64_t> x(ctx);
    std::vector<transit::parcel<std::int64_t>> out;
    for (int dest = 0; dest < p; ++dest) out.push_back({dest, {me, dest}});
    const auto in = x.run(std::move(out));
    ASSERT_EQ(static_cast<int>(in.size()), p);
    for (const auto& parcel : in) EXPECT_EQ(parcel.items, (std::vector<std::int64_t>{parcel.peer, me}));
  }
  // Global array: fetch-add and accumulate from every PE, a region put, then exact values.
  {
    transit::global_array<std::int64_t> a(ctx, static_cast<std::size_t>(4 * p));
    const std::int64_t old = a.fetch_add(0, 1);
    EXPECT_GE(old, 0);
    const std::vector<std::int64_t> ones(static_cast<std::size_t>(4 * p), 1);
    a.accumulate(0, ones, transit::reduce_op::sum);
    a.sync();
    const std::vector<std::int64_t> mine{me, me, me};
    a.put(static_cast<std::size_t>(4 * me + 1), mine);
    a.sync();
    std::vector<std::int64_t> all(static_cast<std::size_t>(4 * p));
    a.get(0, all);
    EXPECT_EQ(all[0], 2 * p);
    for (int pe = 0; pe < p; ++pe) {
      if (pe > 0) {
        EXPECT_EQ(all[static_cast<std::size_t>(4 * pe)], p);
      }
      for (int k = 1; k < 4; ++k) EXPECT_EQ(all[static_cast<std::size_t>(4 * pe + k)], pe);
    }
    a.sync();
  }
  EXPECT_EQ(ctx.allreduce(me, transit::reduce_op::max), p - 1);
  attached.close();
  MPI_Comm_free(&group);
}

TEST(Attach, PeThreadsPerRankRunABody) {
  transit::run_options options = transit::run_options_from_environment();
  options.threads_per_rank = 2;
  transit::session attached = transit::attach(MPI_COMM_WORLD, options);
  EXPECT_EQ(attached.local_pes(), 2);
  EXPECT_EQ(attached.size(), 2 * world_size());
  EXPECT_THROW(static_cast<void>(attached.pe()), std::logic_error);
  attached.run([](transit::context& ctx) { histogram(ctx, MPI_COMM_NULL, 6, 3000); });
}

void expect_refusal(MPI_Comm comm, const std::string& expected) {
  try {
    transit::session s = transit::attach(comm);
    ADD_FAILURE() << "attach accepted it; expected: " << expected;
  } catch (const std::invalid_argument& e) {
    EXPECT_NE(std::string(e.what()).find(expected), std::string::npos) << e.what();
  }
}

TEST(Attach, RefusesWhatIsNotAnIntracommunicator) {
  expect_refusal(MPI_COMM_NULL, "got MPI_COMM_NULL (or a communicator already freed)");
  MPI_Comm freed = MPI_COMM_NULL;
  MPI_Comm_dup(MPI_COMM_WORLD, &freed);
  MPI_Comm_free(&freed);  // sets it to MPI_COMM_NULL, as MPI does
  expect_refusal(freed, "got MPI_COMM_NULL (or a communicator already freed)");
  if (world_size() < 2) return;  // an intercommunicator needs two groups
  MPI_Comm group = split_in_two();
  const int remote_leader = world_rank() < world_size() / 2 ? world_size() / 2 : 0;
  MPI_Comm inter = MPI_COMM_NULL;
  MPI_Intercomm_create(group, 0, MPI_COMM_WORLD, remote_leader, 77, &inter);
  expect_refusal(inter, "got an intercommunicator, expected an intracommunicator");
  MPI_Comm_free(&inter);
  MPI_Comm_free(&group);
}

TEST(Attach, RefusesAPeCountThatIsNotTheCommunicators) {
  transit::run_options options = transit::run_options_from_environment();
  options.pes = world_size() + 1;
  try {
    transit::session s = transit::attach(MPI_COMM_WORLD, options);
    ADD_FAILURE() << "attach accepted --transit-pes " << options.pes;
  } catch (const std::invalid_argument& e) {
    EXPECT_NE(std::string(e.what()).find("expected the number of MPI ranks"), std::string::npos) << e.what();
  }
}

}  // namespace

int main(int argc, char** argv) {
  int provided = 0;
  MPI_Init_thread(&argc, &argv, MPI_THREAD_MULTIPLE, &provided);
  ::testing::InitGoogleTest(&argc, argv);
  int failed = RUN_ALL_TESTS();
  MPI_Allreduce(MPI_IN_PLACE, &failed, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
  MPI_Finalize();
  return failed;
}
