#pragma once
// MatrixMarket files as bale reads and writes them (spmat/spmat_io.upc: write_matrix_mm,
// read_matrix_mm_to_dist): "%%MatrixMarket matrix coordinate pattern|real", then "rows cols nnz",
// then one "row col [value]" line per nonzero, 1-based, rows in order, so that bale and transit
// read each other's dumps (-D).
#include <string>

#include "spmat/spmat.hpp"

namespace transit::apps {

/// Collective: writes `mat` to `path` as bale does: PE 0 writes the header, then each PE in turn
/// appends its rows (global row order within a PE, PE after PE), values with "%lf". Throws
/// input_error on every PE ("-D: cannot write 'PATH': ...") when a PE cannot write the file.
void write_matrix_mm(context& ctx, const sparse_matrix& mat, const std::string& path);

/// Collective: reads `path` on PE 0 and spreads its rows cyclically (bale's
/// read_matrix_mm_to_dist): pattern, real or integer fields (values kept as doubles for the
/// last two), comment lines skipped, rows tidy (sorted). Throws input_error on every PE, with
/// a message naming the file and what was wrong, for a file that cannot be opened, is not
/// MatrixMarket coordinate (or is symmetric / complex), has a bad size line, an entry outside
/// the matrix, a malformed entry, or fewer / more entries than the header says.
sparse_matrix read_matrix_mm_to_dist(context& ctx, const std::string& path);

}  // namespace transit::apps
