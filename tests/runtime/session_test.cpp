// transit::session on the local backend: a program that keeps its main starts and ends transit
// itself (issue 37), with one PE on its own thread or several run by session::run.
#include <gtest/gtest.h>

#include <atomic>
#include <cstdint>
#include <stdexcept>
#include <string>
#include <vector>

#include "transit/transit.hpp"

namespace {

transit::run_options with_pes(int pes) {
  transit::run_options options;
  options.pes = pes;
  return options;
}

// Every PE sends `per_pe` items to each PE; returns what this PE received.
std::int64_t all_to_all_count(transit::context& ctx, int per_pe) {
  std::int64_t received = 0;
  transit::streamer<std::int32_t> s(ctx, {}, [&](std::int32_t v) { received += v; });
  for (int dest = 0; dest < ctx.size(); ++dest)
    for (int i = 0; i < per_pe; ++i) s.insert(1, dest);
  s.finish();
  return received;
}

TEST(Session, OnePeLivesOnTheCallingThread) {
  transit::session job;
  EXPECT_EQ(job.local_pes(), 1);
  EXPECT_EQ(job.size(), 1);
  transit::context& ctx = job.pe();
  EXPECT_EQ(ctx.rank(), 0);
  EXPECT_EQ(ctx.backend(), "local");
  EXPECT_EQ(all_to_all_count(ctx, 1000), 1000);
  EXPECT_EQ(all_to_all_count(job.pe(), 10), 10);  // the same PE, a second step
  job.close();
  EXPECT_THROW(static_cast<void>(job.pe()), std::logic_error);
  job.close();  // idempotent
}

TEST(Session, SeveralPesRunABodyEachTime) {
  transit::session job(with_pes(5));
  EXPECT_EQ(job.local_pes(), 5);
  EXPECT_EQ(job.size(), 5);
  EXPECT_THROW(static_cast<void>(job.pe()), std::logic_error);
  for (int round = 0; round < 2; ++round) {
    std::atomic<std::int64_t> total{0};
    job.run([&](transit::context& ctx) { total += all_to_all_count(ctx, 100); });
    EXPECT_EQ(total.load(), 5 * 5 * 100);
  }
}

TEST(Session, APesExceptionIsRethrownAndTheSessionStillRuns) {
  transit::session job(with_pes(4));
  try {
    job.run([](transit::context& ctx) {
      if (ctx.rank() == 2) throw std::out_of_range("deliberate on PE 2");
      ctx.barrier();  // the others wait here and are unwound
    });
    ADD_FAILURE() << "run returned normally";
  } catch (const std::out_of_range& e) {
    EXPECT_EQ(std::string(e.what()), "deliberate on PE 2");
  }
  std::atomic<int> ran{0};
  job.run([&](transit::context& ctx) {
    ctx.barrier();
    ++ran;
  });
  EXPECT_EQ(ran.load(), 4);
}

TEST(Session, ClosedOrMovedFromRefusesWork) {
  transit::session job(with_pes(2));
  transit::session moved = std::move(job);
  EXPECT_THROW(job.run([](transit::context&) {}), std::logic_error);  // NOLINT(bugprone-use-after-move)
  moved.close();
  EXPECT_THROW(moved.run([](transit::context&) {}), std::logic_error);
}

TEST(Session, RefusesOptionsItCannotRun) {
  transit::run_options mpi;
  mpi.backend = "mpi";
  try {
    transit::session job(mpi);
    ADD_FAILURE() << "a local session accepted backend 'mpi'";
  } catch (const std::invalid_argument& e) {
    EXPECT_NE(std::string(e.what()).find("transit::attach"), std::string::npos) << e.what();
  }
  transit::run_options threads;
  threads.threads_per_rank = 2;
  EXPECT_THROW(transit::session{threads}, std::invalid_argument);
}

}  // namespace
