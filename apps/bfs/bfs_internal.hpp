#pragma once
// What bfs.cpp, validate.cpp and bfs_main.cpp share, not for other folders.
#include <cstdint>
#include <string>
#include <vector>

#include "bfs/bfs.hpp"

namespace transit::apps::bfs_detail {

/// Local: rows from (row, ...) pairs by counting: returns the rows + 1 row starts and calls
/// place(position, pair) for each pair, positions grouped by row.
template <class Pair, class Place>
std::vector<std::int64_t> counting_sort(std::int64_t rows, const std::vector<Pair>& pairs, Place&& place) {
  std::vector<std::int64_t> offset(static_cast<std::size_t>(rows) + 1, 0);
  for (const Pair& p : pairs) ++offset[static_cast<std::size_t>(p.row) + 1];
  for (std::size_t i = 1; i < offset.size(); ++i) offset[i] += offset[i - 1];
  std::vector<std::int64_t> fill(offset.begin(), offset.end() - 1);
  for (const Pair& p : pairs) place(static_cast<std::size_t>(fill[p.row]++), p);
  return offset;
}

/// The search's items carry 32-bit local indices: the error when `pes` PEs would hold more
/// vertices each (empty when they do not).
std::string per_pe_limit_error(int scale, int pes);

/// Throws std::invalid_argument (on every PE: all pass the same root) unless `root` is a vertex.
void check_root(const bfs_graph& graph, std::int64_t root);

}  // namespace transit::apps::bfs_detail
