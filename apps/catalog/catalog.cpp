#include "catalog/catalog.hpp"

#include <algorithm>

#include "bfs/bfs.hpp"
#include "histo/histo.hpp"
#include "ig/ig.hpp"
#include "permute_matrix/permute_matrix.hpp"
#include "randperm/randperm.hpp"
#include "spmat/graph_app.hpp"
#include "sssp/sssp.hpp"
#include "toposort/toposort.hpp"
#include "transpose_matrix/transpose_matrix.hpp"
#include "triangles/triangles.hpp"

namespace transit::apps {

const std::vector<app_entry>& applications() {
  static const std::vector<app_entry> apps = [] {
    std::vector<app_entry> all{bfs_app(), histo_app(), ig_app(), randperm_app(), sssp_app(), triangles_app()};
    // The applications whose options are bale's graph options and the standard ones, no more.
    all.push_back(graph_options_app<permute_matrix_options>(
        "permute_matrix", "bale's permute_matrix: a sparse matrix's rows and columns randomly permuted",
        permute_matrix_main));
    all.push_back(graph_options_app<toposort_options>(
        "toposort", "bale's toposort: permutations making a permuted triangular matrix triangular again",
        toposort_main));
    all.push_back(graph_options_app<transpose_options>(
        "transpose_matrix", "bale's transpose_matrix: the transpose of a distributed sparse matrix",
        transpose_matrix_main));
    std::sort(all.begin(), all.end(), [](const app_entry& a, const app_entry& b) { return a.name < b.name; });
    return all;
  }();
  return apps;
}

}  // namespace transit::apps
