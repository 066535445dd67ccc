// The cost model's per-item charge along a route (docs/tuning.md, "The cost model"): an item costs
// half of per_item at its source, half at every PE that forwards it (one copy into its next
// buffer) and half where it is delivered: (hops + 1) halves. Before 2026-11-26 every link charged
// both halves, so a forwarding PE paid a whole per_item, and the simulated BG/Q all-to-all
// (bench/sim_model.sh) ran 1.23-1.85x faster than predicted; charged as here, 0.97-1.42x.
#include <gtest/gtest.h>

#include <vector>

#include "transit/tuning/model.hpp"

namespace {

using namespace transit;

machine_costs item_costs_only(double per_item) {
  machine_costs c;
  c.intra = c.inter = {0.0, 0.0, per_item};
  c.pes_per_core = 1;
  return c;
}

step_workload one_item(int pes, int from, int to) {
  step_workload w;
  w.item_bytes = 8;
  w.pattern = destinations::matrix;
  w.matrix.assign(static_cast<std::size_t>(pes) * pes, 0);
  w.matrix[static_cast<std::size_t>(from) * pes + to] = 1;
  return w;
}

// 0 -> 3 on a 2x2 grid crosses two links through a forwarding PE: each of the three PEs pays half.
TEST(tuning_model_forwarding, a_forwarding_pe_pays_one_half) {
  const machine m(4);
  const double c = 1e-6;
  const auto p = predict_step(m, virtual_grid({2, 2}, 4), routing::grid, 16, one_item(4, 0, 3), item_costs_only(c));
  EXPECT_EQ(p.item_hops, 2u);
  EXPECT_EQ(p.items_forwarded, 1u);
  EXPECT_DOUBLE_EQ(p.item_seconds, c / 2);  // the busiest PE: source, forwarder and destination alike
}

// Direct: one link, source and destination pay half each, what calibration measures per item.
TEST(tuning_model_forwarding, a_direct_item_costs_per_item_in_all) {
  const machine m(4);
  const double c = 1e-6;
  const auto p = predict_step(m, virtual_grid({4}, 4), routing::grid, 16, one_item(4, 0, 3), item_costs_only(c));
  EXPECT_EQ(p.items_forwarded, 0u);
  EXPECT_DOUBLE_EQ(p.item_seconds, c / 2);
}

// On a 2x2x2 grid a route of three links pays (3 + 1) halves in all, not 2 x 3: the step's
// item-cost part (seconds less flush, one PE per core, nothing else charged) grows with the
// busiest PE, which is never charged more than one half per item it touches.
TEST(tuning_model_forwarding, halves_grow_as_hops_plus_one) {
  const machine m(8);
  const double c = 1e-6;
  // every PE sends one item to the PE opposite on the cube: 3 hops, 2 forwards each
  step_workload w;
  w.item_bytes = 8;
  w.pattern = destinations::matrix;
  w.matrix.assign(64, 0);
  for (int s = 0; s < 8; ++s) w.matrix[static_cast<std::size_t>(s) * 8 + (7 - s)] = 1;
  const auto p = predict_step(m, virtual_grid({2, 2, 2}, 8), routing::grid, 16, w, item_costs_only(c));
  EXPECT_EQ(p.item_hops, 24u);
  EXPECT_EQ(p.items_forwarded, 16u);
  // each PE: its own item's copy, two forwards of others' items, one delivery: 4 halves
  EXPECT_DOUBLE_EQ(p.item_seconds, 4 * c / 2);
  EXPECT_DOUBLE_EQ(p.seconds - p.flush_seconds, 4 * c / 2);
}

}  // namespace
