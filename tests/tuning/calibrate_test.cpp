// Calibration at tiny sizes on the running backend: it produces a profile that every PE agrees
// on, with a curve over the sizes asked for, costs that are numbers, both kinds of link where the
// job has them, and that parses back from the file it is written to.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdio>
#include <cstring>

#include "own_profile.hpp"
#include "test_support.hpp"
#include "transit/tuning/calibrate_streamer.hpp"
#include "transit/profile/profile.hpp"
#include "transit/detail/runtime/context_access.hpp"

namespace {

using namespace transit;

std::uint64_t bits(double v) {
  std::uint64_t b;
  std::memcpy(&b, &v, sizeof b);
  return b;
}

void check_link(const link_calibration& l, std::size_t points, std::size_t raw_points) {
  EXPECT_TRUE(l.measured);
  EXPECT_NE(l.from_pe, l.to_pe);
  // The network library's own messages, at 0 and 8 bytes and the curve's sizes.
  ASSERT_EQ(l.raw_curve.size(), raw_points);
  for (std::size_t i = 0; i < raw_points; ++i) {
    EXPECT_EQ(l.raw_curve[i].message_bytes, i < 2 ? 8 * i : std::size_t{16} << (i - 2));
    EXPECT_GT(l.raw_curve[i].seconds_per_message, 0);
  }
  ASSERT_EQ(l.curve.size(), points);
  for (std::size_t i = 0; i < points; ++i) {
    EXPECT_EQ(l.curve[i].message_bytes, std::size_t{16} << i);
    EXPECT_GT(l.curve[i].seconds_per_message, 0);
    EXPECT_NEAR(l.curve[i].bytes_per_second * l.curve[i].seconds_per_message,
                static_cast<double>(l.curve[i].message_bytes), 1e-6 * static_cast<double>(l.curve[i].message_bytes));
  }
  for (const double v : {l.costs.alpha, l.costs.beta, l.costs.per_item}) {
    EXPECT_TRUE(std::isfinite(v));
    EXPECT_GE(v, 0);
  }
}

TEST(tuning_calibrate, tiny_calibration_writes_a_profile_that_parses_back) {
  const std::string path = transit::testing::use_own_profile_file();
  std::remove(path.c_str());  // from an earlier run
  EXPECT_EQ(transit::testing::run_spmd(
                [](context& ctx) {
                  if (ctx.size() < 2) {
                    EXPECT_THROW(calibrate_streamer(ctx), std::invalid_argument);
                    return;
                  }
                  calibration_options o;
                  o.min_message_bytes = 16;
                  o.max_message_bytes = 1024;  // 16 .. 1024: 7 points
                  o.seconds_per_point = 0.002;
                  o.buffer_items = {1, 16, 256};
                  const streamer_profile p = calibrate_streamer(ctx, o);
                  EXPECT_EQ(p.backend, ctx.backend());
                  EXPECT_EQ(p.pes, ctx.size());
                  EXPECT_EQ(p.pes_per_node, ctx.machine().max_pes_per_node());
                  EXPECT_EQ(p.host, this_host());
                  const bool intra = ctx.machine().max_pes_per_node() >= 2, inter = ctx.machine().num_nodes() >= 2;
                  EXPECT_EQ(p.intra.measured, intra);
                  EXPECT_EQ(p.inter.measured, inter);
                  // Raw messages where the job runs on MPI with one PE per rank (not its hybrid runs).
                  const int processes =
                      1 + ctx.allreduce(detail::context_access::net(ctx).process(), reduce_op::max);
                  const std::size_t raw = ctx.backend() == "mpi" && processes == ctx.size() ? 9 : 0;
                  if (intra) check_link(p.intra, 7, raw);
                  if (inter) check_link(p.inter, 7, raw);
                  EXPECT_GT(p.peak_bytes_per_second, 0);
                  EXPECT_LE(p.buffer_bytes_50, p.buffer_bytes_75);
                  EXPECT_LE(p.buffer_bytes_75, p.buffer_bytes_90);
                  EXPECT_GE(p.buffer_bytes_50, 16u);
                  EXPECT_LE(p.buffer_bytes_90, 1024u);
                  // Every PE computed the same profile (timings are agreed by allreduce).
                  const auto same = [&](double v) {
                    return ctx.allreduce(bits(v), reduce_op::max) == ctx.allreduce(bits(v), reduce_op::min);
                  };
                  EXPECT_TRUE(same(p.intra.costs.alpha));
                  EXPECT_TRUE(same(p.peak_bytes_per_second));
                  EXPECT_TRUE(same(static_cast<double>(p.buffer_bytes_75)));

                  // Written (by PE 0, into the file ctest gives this test) and read back.
                  if (ctx.rank() == 0) {
                    profile_file file = profile_file::load(default_profile_path());
                    file.put(p);
                    file.save();
                    const auto back = profile_file::load(default_profile_path())
                                          .find_streamer(p.backend, p.pes_per_node, p.host);
                    ASSERT_TRUE(back.has_value());
                    EXPECT_EQ(back->buffer_bytes_75, p.buffer_bytes_75);
                    EXPECT_EQ(back->intra.curve.size(), p.intra.curve.size());
                    EXPECT_EQ(back->intra.raw_curve.size(), p.intra.raw_curve.size());
                    EXPECT_EQ(back->inter.raw_curve.size(), p.inter.raw_curve.size());
                    EXPECT_EQ(back->inter.measured, p.inter.measured);
                    EXPECT_DOUBLE_EQ(back->intra.costs.alpha, p.intra.costs.alpha);
                    EXPECT_DOUBLE_EQ(back->peak_bytes_per_second, p.peak_bytes_per_second);
                  }
                  ctx.barrier();
                  // A streamer with buffer_items = 0 then uses what the profile says, and the
                  // calibrated per-item cost is positive (it read 0 on mpi once).
                  EXPECT_GT((inter ? p.inter : p.intra).costs.per_item, 0);
                  streamer_options so;
                  so.buffer_items = 0;
                  streamer<std::uint64_t> s(ctx, so, [](const std::uint64_t&) {});
                  const std::size_t expected = automatic_buffer_items(p, 8);
                  EXPECT_EQ(s.current_options().buffer_items, expected);
                  s.finish();
                },
                {"--transit-pes-per-node=2"}),
            0);
}

}  // namespace
