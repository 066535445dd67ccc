#include "catalog/catalog.hpp"

#include <algorithm>

#include "histo/histo.hpp"
#include "ig/ig.hpp"
#include "permute_matrix/permute_matrix.hpp"
#include "randperm/randperm.hpp"
#include "sssp/sssp.hpp"
#include "toposort/toposort.hpp"
#include "transpose_matrix/transpose_matrix.hpp"
#include "triangles/triangles.hpp"

namespace transit::apps {

const std::vector<app_entry>& applications() {
  static const std::vector<app_entry> apps = [] {
    std::vector<app_entry> all{histo_app(),    ig_app(),       permute_matrix_app(),   randperm_app(),
                               sssp_app(),     toposort_app(), transpose_matrix_app(), triangles_app()};
    std::sort(all.begin(), all.end(), [](const app_entry& a, const app_entry& b) { return a.name < b.name; });
    return all;
  }();
  return apps;
}

}  // namespace transit::apps
