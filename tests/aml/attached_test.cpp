// transit_aml attached to transit's PEs (transit_aml_attach): the checks of checks.c on the local
// backend's PE threads, on MPI ranks, and on PE threads in MPI ranks.
#include <gtest/gtest.h>

#include "aml.h"
#include "c_api/handles.hpp"
#include "checks.h"
#include "test_support.hpp"

namespace {

TEST(aml_attached, follows_amls_rules) {
  aml_checks_catch_errors();  // process-wide, before any PE runs
  EXPECT_EQ(transit::testing::run_spmd([](transit::context& ctx) {
              transit_context handle = transit::c_api::lend(ctx);
              ASSERT_EQ(transit_aml_attach(&handle), 0);
              EXPECT_EQ(aml_my_pe(), ctx.rank());
              EXPECT_EQ(aml_n_pes(), ctx.size());
              EXPECT_EQ(aml_checks(), 0);
              transit_aml_detach();
            }),
            0);
}

}  // namespace
