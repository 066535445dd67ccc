#pragma once
// Exactly-once checking for streamer tests: items carry (source, sequence, destination); every PE
// regenerates every source's stream from the seed, so it knows exactly which items it must get.
#include <gtest/gtest.h>

#include <cstdint>
#include <random>
#include <string>
#include <vector>

#include "test_support.hpp"

namespace transit::testing {

struct probe {
  std::int32_t source;
  std::int32_t dest;
  std::int64_t sequence;
};

/// Destination of item `sequence` of `source` in a random stream (deterministic per seed).
inline int probe_destination(std::uint64_t seed, int source, std::int64_t sequence, int size) {
  std::uint64_t x = seed * 0x9E3779B97F4A7C15ull + static_cast<std::uint64_t>(source) * 0xBF58476D1CE4E5B9ull +
                    static_cast<std::uint64_t>(sequence) * 0x94D049BB133111EBull;
  x ^= x >> 31;
  x *= 0xD6E8FEB86659D7A5ull;
  x ^= x >> 29;
  return static_cast<int>(x % static_cast<std::uint64_t>(size));
}

/// Records deliveries on one PE and checks them against the regenerated streams.
class delivery_log {
 public:
  delivery_log(int rank, int size, std::int64_t items_per_pe)
      : rank_(rank), size_(size), per_pe_(items_per_pe), seen_(static_cast<std::size_t>(size) * items_per_pe, 0) {}

  void record(const probe& p) {
    ASSERT_EQ(p.dest, rank_) << "item delivered to the wrong PE";
    ASSERT_GE(p.source, 0);
    ASSERT_LT(p.source, size_);
    ASSERT_GE(p.sequence, 0);
    ASSERT_LT(p.sequence, per_pe_);
    ++seen_[static_cast<std::size_t>(p.source) * per_pe_ + p.sequence];
  }

  /// Every item for this PE seen exactly once, and nothing else.
  void check(std::uint64_t seed, const std::string& where) const {
    std::int64_t missing = 0, duplicated = 0, stray = 0;
    for (int s = 0; s < size_; ++s) {
      for (std::int64_t q = 0; q < per_pe_; ++q) {
        const int count = seen_[static_cast<std::size_t>(s) * per_pe_ + q];
        const bool mine = probe_destination(seed, s, q, size_) == rank_;
        if (mine && count == 0) ++missing;
        if (count > 1) ++duplicated;
        if (!mine && count > 0) ++stray;
      }
    }
    EXPECT_EQ(missing, 0) << where << ": items never delivered on PE " << rank_;
    EXPECT_EQ(duplicated, 0) << where << ": items delivered twice on PE " << rank_;
    EXPECT_EQ(stray, 0) << where << ": items delivered that were not for PE " << rank_;
  }

  void reset() { std::fill(seen_.begin(), seen_.end(), 0); }

 private:
  int rank_, size_;
  std::int64_t per_pe_;
  std::vector<int> seen_;
};

}  // namespace transit::testing
