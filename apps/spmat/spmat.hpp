#pragma once
// bale's sparse matrices (spmat/spmat.h) in transit's terms: a distributed CSR matrix with cyclic
// rows (row i on PE i % P, local row i / P), each PE holding its own rows in plain vectors; the
// helpers bale's applications use (sort_nonzeros, tril/triu, the triangular checks, compare_matrix,
// direct_undirected_graph), a reference transpose, and a checksum for tests. The generators and
// the MatrixMarket files are in generators.hpp and matrix_market.hpp.
#include <cstdint>
#include <span>
#include <stdexcept>
#include <string>
#include <vector>

#include "common/index_stream.hpp"  // cyclic_local_count: bale's lnumrows
#include "common/ranf.hpp"
#include "transit/transit.hpp"

namespace transit::apps {

/// bale's edge_type (spmat_enums.h).
enum class edge_type { directed, undirected, directed_weighted, undirected_weighted };
/// bale's self_loops: with `loops`, every vertex has its loop (a full diagonal).
enum class self_loops { no_loops, loops };
/// bale's graph_model: FLAT is Erdős–Rényi.
enum class graph_model { flat, geometric, kronecker };

/// Local: true for the weighted edge types.
inline bool is_weighted(edge_type t) { return t == edge_type::directed_weighted || t == edge_type::undirected_weighted; }
/// Local: true for the undirected edge types (stored strictly lower triangular, plus loops).
inline bool is_undirected(edge_type t) { return t == edge_type::undirected || t == edge_type::undirected_weighted; }

/// What bad input (a file, a spec) raises, with the same message on every PE of the job, so that
/// every PE can end with status 2 and PE 0 alone says why ("transit: error: " + what()).
class input_error : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

/// bale's sparsemat_t: this PE's rows of a matrix whose row i lives on PE i % pes as local row
/// i / pes. A "local" matrix in bale's sense (init_local_matrix: every row here) is pes == 1.
/// Offsets and nonzeros are bale's loffset / lnonzero; `value` is empty for an unweighted matrix
/// (bale's value == NULL). Rows are "tidy" when each row's columns ascend (sort_nonzeros).
/// A plain value: copying it is bale's copy_matrix; the members are Local state of this PE.
struct sparse_matrix {
  std::int64_t numrows = 0;   ///< rows over all PEs
  std::int64_t lnumrows = 0;  ///< rows on this PE
  std::int64_t numcols = 0;   ///< columns: nonzeros are in [0, numcols)
  std::int64_t nnz = 0;       ///< nonzeros over all PEs
  std::int64_t lnnz = 0;      ///< nonzeros on this PE (== nonzero.size())
  int pe = 0;                 ///< this PE (0 for a local matrix)
  int pes = 1;                ///< the PEs the rows are spread over (1 for a local matrix)
  bool weighted = false;      ///< true when `value` holds one double per nonzero
  std::vector<std::int64_t> offset{0};  ///< lnumrows + 1 offsets into nonzero (offset[0] == 0)
  std::vector<std::int64_t> nonzero{};  ///< column of each nonzero, row after row
  std::vector<double> value{};          ///< weight of each nonzero (weighted only)

  /// Local: the global row of local row `lrow` (lrow * pes + pe).
  std::int64_t global_row(std::int64_t lrow) const noexcept { return lrow * pes + pe; }
  /// Local: the columns of local row `lrow`.
  std::span<const std::int64_t> row(std::int64_t lrow) const {
    return std::span<const std::int64_t>(nonzero).subspan(static_cast<std::size_t>(offset[static_cast<std::size_t>(lrow)]),
                                                          static_cast<std::size_t>(row_count(lrow)));
  }
  /// Local: the number of nonzeros in local row `lrow` (bale's rowcount_l).
  std::int64_t row_count(std::int64_t lrow) const noexcept {
    return offset[static_cast<std::size_t>(lrow) + 1] - offset[static_cast<std::size_t>(lrow)];
  }
};

/// Local: an empty matrix (no nonzeros yet) shaped as bale's init_matrix shapes PE `pe`'s part:
/// lnumrows rows of `numrows` cyclic rows, offsets all zero, nonzero/value reserved for `lnnz`.
/// nnz and lnnz are left 0 (the builder sets them; see finish_matrix). Throws
/// std::invalid_argument for negative sizes or pe outside [0, pes).
sparse_matrix make_matrix(std::int64_t numrows, std::int64_t numcols, int pe, int pes, bool weighted,
                          std::int64_t lnnz_reserve = 0);

/// One nonzero with its global row, as matrices are built from pieces and moved between PEs.
struct matrix_entry {
  std::int64_t row = 0;
  std::int64_t col = 0;
  double val = 0;  ///< the weight (ignored for an unweighted matrix)
};

/// Local: PE `pe`'s part of a numrows x numcols matrix from entries whose rows all live on this
/// PE (row % pes == pe), in any row order; within a row the entries keep their order. lnnz is
/// set, nnz is left to finish_matrix (Collective) or to the caller. Throws
/// std::invalid_argument for an entry of another PE or outside the matrix.
sparse_matrix matrix_from_entries(std::int64_t numrows, std::int64_t numcols, int pe, int pes, bool weighted,
                                  std::span<const matrix_entry> entries);

/// Collective: sets lnnz from the last offset and nnz as its sum over PEs (bale's init_matrix
/// does the sum). Throws std::logic_error when the vectors disagree with the offsets.
void finish_matrix(context& ctx, sparse_matrix& mat);

/// Local: sorts each row's columns ascending, carrying the values along (bale's sort_nonzeros,
/// without its barrier).
void sort_nonzeros(sparse_matrix& mat);

/// Collective: keeps the nonzeros on or below the k-th diagonal (col - row <= k), bale's tril;
/// returns the number removed over all PEs.
std::int64_t tril(context& ctx, sparse_matrix& mat, std::int64_t k);
/// Collective: keeps the nonzeros on or above the k-th diagonal (col - row >= k), bale's triu;
/// returns the number removed over all PEs.
std::int64_t triu(context& ctx, sparse_matrix& mat, std::int64_t k);

/// Collective: true when no nonzero is above the diagonal and, with unit_diagonal, every row
/// has its diagonal entry (bale's is_lower_triangular, which also prints the counts on PE 0).
bool is_lower_triangular(context& ctx, const sparse_matrix& mat, bool unit_diagonal);
/// Collective: true when no nonzero is below the diagonal and, with unit_diagonal, every row has
/// its diagonal entry (bale's is_upper_triangular).
bool is_upper_triangular(context& ctx, const sparse_matrix& mat, bool unit_diagonal);

/// Collective: true when the two matrices are equal on every PE: shapes, offsets, columns in
/// order and (both weighted or neither) values within bale's tolerance (spmat_are_eq_doubles).
/// A PE that finds a difference says what it was on stderr, as bale's compare_matrix does.
bool compare_matrix(context& ctx, const sparse_matrix& left, const sparse_matrix& right);

/// Collective: a directed graph from an undirected one held lower triangular: each edge {r, c}
/// becomes r->c or c->r as a draw from `rng` says (bale's direct_undirected_graph: below 0.5
/// keeps (row, col), otherwise (col, row) on col's PE), rows tidy. `rng` is this PE's stream,
/// continuing where the caller left it, as bale continues lgp_rand_double's.
sparse_matrix direct_undirected_graph(context& ctx, const sparse_matrix& lower, knuth_ranf& rng);

/// Local: the transpose of a local matrix (pes == 1), rows tidy: the reference the
/// distributed transposes are checked against. Throws std::invalid_argument for pes != 1.
sparse_matrix transpose_local(const sparse_matrix& local);

/// Collective: the whole matrix on every PE as a local matrix (pes == 1), rows in the order
/// each PE holds them. For checks on small matrices.
sparse_matrix gather_matrix(context& ctx, const sparse_matrix& mat);

/// Local: this PE's part (cyclic rows) of a local matrix every PE holds whole (the inverse of
/// gather_matrix); nnz stays the whole matrix's.
sparse_matrix distribute_local(const sparse_matrix& local, int pe, int pes);

/// What matrix_checksum returns: an order-free sum of a hash of each nonzero's (row, column),
/// the count, and the sum of the values (0 unweighted).
struct matrix_checksum_t {
  std::uint64_t structure = 0;  ///< sum mod 2^64 of spmat_hash(row, col) over the nonzeros
  std::int64_t nnz = 0;         ///< nonzeros over all PEs
  double value_sum = 0;         ///< sum of the values (weighted): compare with a tolerance
};

/// Local: the hash of one nonzero (0-based row and column): splitmix64's finaliser of
/// row * 2^32 + col (the scripts that record bale's checksums compute the same from its files).
std::uint64_t spmat_hash(std::int64_t row, std::int64_t col);

/// Collective: the checksum of a distributed matrix, the same on every PE and for any number
/// of PEs: tests compare it with values computed from bale's dumped files.
matrix_checksum_t matrix_checksum(context& ctx, const sparse_matrix& mat);

}  // namespace transit::apps
