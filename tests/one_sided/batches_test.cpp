// Batches of scattered single elements: in one non-blocking request (put_nb, get_nb,
// accumulate_nb, fetch_add_nb, compare_exchange_nb with an index span) and blocking (put, accumulate with an index
// span); the C API's transit_array_* run on them. Under both layouts, every routed topology and
// both progress modes; bad batches issue nothing.
#include <cstdint>
#include <stdexcept>
#include <string>
#include <vector>

#include "one_sided_checks.hpp"

namespace {

using namespace transit;
using transit::testing::configurations;
using transit::testing::describe;

// A PE's batch: indices spread over every owner, repeated (the same element twice in a batch).
std::vector<std::uint64_t> batch_of(const context& ctx, std::size_t n, std::size_t count) {
  std::vector<std::uint64_t> indices(count);
  for (std::size_t k = 0; k < count; ++k)
    indices[k] = (static_cast<std::uint64_t>(ctx.rank()) * 31 + k * 17) % n;
  return indices;
}

TEST(global_array_batches, scattered_elements_in_one_request) {
  EXPECT_EQ(transit::testing::run_spmd(
                [](context& ctx) {
                  const auto p = static_cast<std::int64_t>(ctx.size());
                  for (const auto layout : {array_layout::block, array_layout::cyclic}) {
                    for (const auto& o : configurations(ctx)) {
                      const std::size_t n = 3 * static_cast<std::size_t>(ctx.size()) + 2, count = 2 * n + 1;
                      const auto indices = batch_of(ctx, n, count);
                      // accumulate_nb, then accumulate: a histogram of every PE's batch, twice.
                      global_array<std::int64_t> histogram(ctx, n, layout, o);
                      const std::vector<std::int64_t> ones(count, 1);
                      histogram.accumulate_nb(indices, ones, reduce_op::sum).wait();
                      histogram.accumulate(indices, ones, reduce_op::sum);
                      histogram.sync();
                      std::vector<std::int64_t> expected(n, 0);
                      for (int r = 0; r < ctx.size(); ++r) {
                        for (std::size_t k = 0; k < count; ++k)
                          expected[(static_cast<std::uint64_t>(r) * 31 + k * 17) % n] += 2;
                      }
                      for (std::size_t k = 0; k < histogram.local().size(); ++k)
                        ASSERT_EQ(histogram.local()[k], expected[histogram.global_index(k)]) << describe(ctx, o);
                      // get_nb: every PE reads its batch back.
                      std::vector<std::int64_t> got(count, -1);
                      histogram.get_nb(indices, got).wait();
                      for (std::size_t k = 0; k < count; ++k) ASSERT_EQ(got[k], expected[indices[k]]) << describe(ctx, o);
                      histogram.sync();
                      // fetch_add_nb: each PE adds 1 to element k of a fresh array, once per k; the
                      // old values of one element over the PEs are 0..P-1.
                      global_array<std::int64_t> counts(ctx, n, layout, o);
                      std::vector<std::uint64_t> every(n);
                      for (std::size_t i = 0; i < n; ++i) every[i] = i;
                      const std::vector<std::int64_t> deltas(n, 1);
                      std::vector<std::int64_t> old(n, -1);
                      counts.fetch_add_nb(every, deltas, old).wait();
                      ctx.allreduce(std::span<std::int64_t>(old), reduce_op::sum);
                      for (std::size_t i = 0; i < n; ++i) ASSERT_EQ(old[i], p * (p - 1) / 2) << describe(ctx, o);
                      counts.sync();
                      // compare_exchange_nb: every PE claims every element of a zeroed array (0 ->
                      // its rank + 1), then in the same batch marks its claims (rank + 1 -> 100 +
                      // rank + 1): one winner per element, whose second swap follows its first.
                      global_array<std::int64_t> claims(ctx, n, layout, o);
                      std::vector<std::uint64_t> twice(every);
                      twice.insert(twice.end(), every.begin(), every.end());
                      const std::int64_t mine = ctx.rank() + 1;
                      std::vector<std::int64_t> expect(2 * n, 0), desire(2 * n, mine), seen(2 * n, -1);
                      for (std::size_t i = n; i < 2 * n; ++i) {
                        expect[i] = mine;
                        desire[i] = 100 + mine;
                      }
                      claims.compare_exchange_nb(twice, expect, desire, seen).wait();
                      claims.sync();
                      std::vector<std::int64_t> final_values(n, -1);
                      claims.get_nb(every, final_values).wait();
                      std::vector<std::int64_t> winners(n, 0);
                      for (std::size_t i = 0; i < n; ++i) {
                        const std::int64_t winner = final_values[i] - 100;
                        ASSERT_GE(winner, 1) << describe(ctx, o);
                        ASSERT_LE(winner, p) << describe(ctx, o);
                        winners[i] = seen[i] == 0 ? 1 : 0;
                        if (seen[i] == 0) {
                          ASSERT_EQ(winner, mine) << describe(ctx, o);
                          ASSERT_EQ(seen[n + i], mine) << describe(ctx, o);  // its own claim, in order
                        } else {
                          ASSERT_TRUE(seen[i] == winner || seen[i] == 100 + winner) << seen[i] << " " << describe(ctx, o);
                          ASSERT_TRUE(seen[n + i] == winner || seen[n + i] == 100 + winner) << describe(ctx, o);
                        }
                      }
                      ctx.allreduce(std::span<std::int64_t>(winners), reduce_op::sum);
                      for (std::size_t i = 0; i < n; ++i) ASSERT_EQ(winners[i], 1) << "element " << i << " " << describe(ctx, o);
                      claims.sync();
                      // put_nb and put: PE 0 writes 10 * i to every element, in reverse order (the
                      // first half non-blocking).
                      if (ctx.rank() == 0) {
                        std::vector<std::uint64_t> backwards(n);
                        std::vector<std::int64_t> values(n);
                        for (std::size_t i = 0; i < n; ++i) {
                          backwards[i] = n - 1 - i;
                          values[i] = static_cast<std::int64_t>(10 * (n - 1 - i));
                        }
                        const std::size_t half = n / 2;
                        auto first = counts.put_nb(std::span(backwards).first(half), std::span(values).first(half));
                        counts.put(std::span(backwards).subspan(half), std::span<const std::int64_t>(values).subspan(half));
                        first.wait();
                      }
                      counts.sync();
                      for (std::size_t k = 0; k < counts.local().size(); ++k)
                        ASSERT_EQ(counts.local()[k], static_cast<std::int64_t>(10 * counts.global_index(k)))
                            << describe(ctx, o);
                      counts.sync();
                    }
                  }
                },
                {"--transit-pes-per-node=2"}),
            0);
}

TEST(global_array_batches, bad_batches_issue_nothing) {
  EXPECT_EQ(transit::testing::run_spmd([](context& ctx) {
              global_array<std::int64_t> a(ctx, 10, array_layout::cyclic);
              const std::uint64_t indices[] = {1, 10, 2};
              const std::int64_t values[] = {5, 5, 5};
              std::int64_t out[3] = {0, 0, 0};
              try {
                a.accumulate_nb(indices, values, reduce_op::sum);
                ADD_FAILURE() << "no error for index 10";
              } catch (const std::out_of_range& e) {
                EXPECT_EQ(std::string(e.what()),
                          "global_array::accumulate_nb: indices[1] = 10 is outside [0, 10): expected an element of the "
                          "array; nothing was issued");
              }
              try {
                a.put(indices, std::span(values, 2));
                ADD_FAILURE() << "no error for two values for three indices";
              } catch (const std::invalid_argument& e) {
                EXPECT_EQ(std::string(e.what()), "global_array::put: got 2 values for 3 indices: expected one per index");
              }
              try {
                a.get_nb(std::span(indices, 1), std::span(out, 2));
                ADD_FAILURE() << "no error for two outputs for one index";
              } catch (const std::invalid_argument& e) {
                EXPECT_EQ(std::string(e.what()),
                          "global_array::get_nb: got 2 output elements for 1 indices: expected one per index");
              }
              try {
                a.compare_exchange_nb(indices, values, std::span(values, 2), out);
                ADD_FAILURE() << "no error for two desired values for three indices";
              } catch (const std::invalid_argument& e) {
                EXPECT_EQ(std::string(e.what()),
                          "global_array::compare_exchange_nb: got 2 desired values for 3 indices: expected one per index");
              }
              try {
                a.compare_exchange_nb(std::size_t{10}, 0, 1, out);
                ADD_FAILURE() << "no error for index 10";
              } catch (const std::out_of_range& e) {
                EXPECT_EQ(std::string(e.what()),
                          "global_array::compare_exchange_nb: index 10 is outside [0, 10): expected an element of the array");
              }
              try {
                a.compare_exchange_nb(std::size_t{1}, 0, 1, nullptr);
                ADD_FAILURE() << "no error for a null old_value";
              } catch (const std::invalid_argument& e) {
                EXPECT_EQ(std::string(e.what()),
                          "global_array::compare_exchange_nb: old_value is null: expected where the old value goes");
              }
              a.sync();
              for (const std::int64_t v : a.local()) EXPECT_EQ(v, 0);  // element 1 got nothing
            }),
            0);
}

}  // namespace
