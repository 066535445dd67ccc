// Handler ids and code references: the same on every PE without a handshake, whatever order the
// PEs first use their handlers in, for lambdas, function pointers, and function pointers into a
// shared library; on the mpi backend each PE is a process with its own address-space layout.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <numeric>
#include <stdexcept>
#include <string>
#include <vector>

#include "handler_library.hpp"
#include "test_support.hpp"
#include "transit/transit.hpp"

namespace {

using transit::active_messages;
using transit::context;
using transit::reduce_op;

thread_local std::vector<std::uint64_t> calls_of;  // per handler number

void handler_0(active_messages&, std::uint64_t v) { calls_of[0] += v; }
void handler_1(active_messages&, std::uint64_t v) { calls_of[1] += v; }
void handler_2(active_messages&, std::uint64_t v) { calls_of[2] += v; }
void handler_3(active_messages&, std::uint32_t v, std::string_view s) { calls_of[3] += v + s.size(); }

// Call number k of the six handlers; PEs go through them in different orders.
void call(active_messages& am, int k, int dest, std::uint64_t v) {
  switch (k) {
    case 0: am.async(dest, &handler_0, v); break;
    case 1: am.async(dest, &handler_1, v); break;
    case 2: am.async(dest, &handler_2, v); break;
    case 3: am.async(dest, &handler_3, static_cast<std::uint32_t>(v), std::string("abc")); break;
    case 4: am.async(dest, [](active_messages&, std::uint64_t x) { calls_of[4] += x; }, v); break;
    default: am.async(dest, &library_handler, v); break;
  }
}

TEST(active_handler_ids, agree_whatever_order_pes_first_use_them_in) {
  EXPECT_EQ(transit::testing::run_spmd([](context& ctx) {
              calls_of.assign(6, 0);
              library_calls = library_sum = 0;
              active_messages am(ctx);
              // A PE-dependent order of first use: a registry filled at first use would give
              // different ids on different PEs and run the wrong handlers.
              std::vector<int> order(6);
              std::iota(order.begin(), order.end(), 0);
              for (int r = 0; r < ctx.rank(); ++r) std::next_permutation(order.begin(), order.end());
              if (ctx.rank() % 2 == 1) std::reverse(order.begin(), order.end());
              for (const int k : order)
                for (int d = 0; d < ctx.size(); ++d) call(am, k, d, static_cast<std::uint64_t>(k + 1));
              am.barrier();
              const auto p = static_cast<std::uint64_t>(ctx.size());
              for (std::uint64_t k = 0; k < 5; ++k) {
                const std::uint64_t extra = k == 3 ? 3 : 0;  // handler 3 adds the text's length
                EXPECT_EQ(calls_of[k], p * (k + 1 + extra)) << "handler " << k;
              }
              EXPECT_EQ(library_calls, p);
              EXPECT_EQ(library_sum, 6 * p);
            }),
            0);
}

// On the mpi backend the code sits at different addresses in different processes (ASLR, PIE),
// yet calls through function pointers arrive: what travels is a place within an object.
TEST(active_handler_ids, function_pointers_travel_as_places_not_addresses) {
  EXPECT_EQ(transit::testing::run_spmd([](context& ctx) {
              calls_of.assign(6, 0);
              library_calls = library_sum = 0;
              active_messages am(ctx);
              const auto here = reinterpret_cast<std::uintptr_t>(&handler_1);
              const auto library = reinterpret_cast<std::uintptr_t>(&library_handler);
              const auto lowest = ctx.allreduce<std::uint64_t>(here, reduce_op::min);
              const auto highest = ctx.allreduce<std::uint64_t>(here, reduce_op::max);
              const auto library_lowest = ctx.allreduce<std::uint64_t>(library, reduce_op::min);
              const auto library_highest = ctx.allreduce<std::uint64_t>(library, reduce_op::max);
              if (ctx.rank() == 0 && ctx.backend() == "mpi" && ctx.size() > 1)
                std::printf("handler addresses across %d processes: %s; library: %s\n", ctx.size(),
                            lowest == highest ? "all equal (no ASLR here)" : "they differ",
                            library_lowest == library_highest ? "all equal" : "they differ");
              const int next = (ctx.rank() + 1) % ctx.size();
              am.async(next, &handler_1, std::uint64_t{5});
              am.async(next, &library_handler, std::uint64_t{7});
              am.barrier();
              EXPECT_EQ(calls_of[1], 5u);
              EXPECT_EQ(library_sum, 7u);
            }),
            0);
}

// The process's table, serially: ids are dense and distinct, code references come back to the
// same address, and a reference to nothing is refused with a message.
TEST(active_handler_ids, table_and_code_references) {
  const auto table = transit::detail::current_handlers();
  ASSERT_EQ(table.invoke.size(), table.run.size());
  // At least this file's: one per (handler type, argument kinds), so handler_0..2 and the
  // library's function share theirs (the function travels as a code reference).
  ASSERT_GE(table.invoke.size(), 3u);
  std::vector<std::uintptr_t> sorted;
  for (const auto f : table.invoke) sorted.push_back(reinterpret_cast<std::uintptr_t>(f));
  std::sort(sorted.begin(), sorted.end());
  EXPECT_EQ(std::adjacent_find(sorted.begin(), sorted.end()), sorted.end()) << "two ids for one handler";
  EXPECT_EQ(transit::detail::current_handlers().signature, table.signature) << "the table is stable";
  for (const auto address : {reinterpret_cast<std::uintptr_t>(&handler_2), reinterpret_cast<std::uintptr_t>(&library_handler)}) {
    const std::uint64_t reference = transit::detail::code_reference(address);
    EXPECT_EQ(transit::detail::code_address(reference), address);
  }
  EXPECT_NE(transit::detail::code_reference(reinterpret_cast<std::uintptr_t>(&handler_2)) >> 32,
            transit::detail::code_reference(reinterpret_cast<std::uintptr_t>(&library_handler)) >> 32)
      << "the executable and the library are told apart";
  EXPECT_THROW(transit::detail::code_reference(0), std::invalid_argument);
  try {
    transit::detail::code_address(0xdeadbeef'00000010ull);
    ADD_FAILURE() << "a reference to no object";
  } catch (const std::runtime_error& e) {
    EXPECT_NE(std::string(e.what()).find("every PE must run the same binary"), std::string::npos) << e.what();
  }
}

}  // namespace
