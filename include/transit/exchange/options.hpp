#pragma once
// Types of the sparse all-to-all exchange (docs/exchange.md): parcels, methods, options, counters.
#include <cstdint>
#include <optional>
#include <string_view>
#include <vector>

#include "transit/grid/virtual_grid.hpp"

namespace transit {

/// Items for one peer: outgoing, `peer` is the destination; returned by run(), the source.
template <class T>
struct parcel {
  int peer = -1;         ///< the destination (outgoing) or the source (returned by run())
  std::vector<T> items;  ///< the items, in the order given (a source's parcels concatenated)
};

/// How a sparse_exchange moves its records (docs/exchange.md compares them).
enum class exchange_method {
  automatic,       ///< times the others on the first runs and keeps the fastest
  direct,          ///< one message per destination; receivers learn their sources by consensus
  crystal_router,  ///< ceil(log2 P) stages of pairwise exchanges over halves of the PE range
  grid,            ///< routed dimension by dimension over a virtual grid, aggregated per hop
  mpi_alltoallv,   ///< MPI_Alltoallv (mpi backend only)
  mpi_neighbor,    ///< MPI_Neighbor_alltoallv on a graph built once per pattern (mpi backend only)
};

/// The enum name: "automatic", "direct", "crystal_router", "grid", "mpi_alltoallv", "mpi_neighbor". Local.
std::string_view to_string(exchange_method m) noexcept;
/// The method with that enum name; throws std::invalid_argument naming the value otherwise. Local.
exchange_method parse_exchange_method(std::string_view name);

/// How a sparse_exchange moves its records; equal on every PE.
struct exchange_options {
  /// The method. The environment variable TRANSIT_EXCHANGE_METHOD, set to an enum name
  /// ("direct", ...), replaces automatic (only).
  exchange_method method = exchange_method::automatic;
  /// The grid records are routed over by method grid; default virtual_grid::balanced(P, 2).
  std::optional<virtual_grid> grid;
  /// The caller's promise that every run sends the same number of bytes to the same other PEs (the
  /// items may differ), as a fixed halo exchange does: a persistent exchange. mpi_alltoallv then
  /// exchanges counts once, in the first run, and later runs call MPI_Alltoallv alone; the other
  /// methods need no counts. Every run checks the promise on every PE, against that PE's first run:
  /// a PE whose parcels changed throws std::invalid_argument before it communicates (the PEs whose
  /// parcels did not change are then inside the run: let the exception end the job). Default false.
  bool fixed_pattern = false;
};

/// One candidate's time per run when automatic last chose (the slowest PE's): the median over its
/// racing and confirming batches if it was raced, else its scouting time (it was more than 2x the
/// fastest).
struct exchange_candidate {
  exchange_method method = exchange_method::direct;  ///< the candidate
  double seconds = 0;      ///< its time per run (the slowest PE's), as above
  bool raced = false;      ///< survived scouting; only raced candidates can be chosen
  bool confirmed = false;  ///< a finalist of the confirming rounds; when any is, only they can be chosen
};

/// Counters of one PE's sparse_exchange since construction.
struct exchange_stats {
  std::uint64_t runs = 0;             ///< calls of run()
  std::uint64_t messages_sent = 0;    ///< point-to-point messages this PE sent: parcels, empty stage
                                      ///< messages, acknowledgements, MPI count exchanges included
  std::uint64_t bytes_sent = 0;       ///< bytes of those messages, headers included
  std::uint64_t bytes_forwarded = 0;  ///< bytes of other PEs' records this PE sent on (crystal
                                      ///< router and grid), record headers included
  std::uint64_t bytes_delivered = 0;  ///< item bytes returned by run() on this PE, self-sends included
  std::uint64_t choices = 0;          ///< times automatic chose a method
  std::uint64_t trial_runs = 0;       ///< runs automatic spent timing candidates
  std::uint64_t exploit_runs = 0;     ///< runs of the leader automatic made between its trials, so that
                                      ///< they cost at most 10% of the time the runs take meanwhile
  std::uint64_t neighbor_graphs = 0;  ///< MPI neighbourhood graphs built (method mpi_neighbor)
  /// The candidates automatic compared in its last choice, in the order tried.
  std::vector<exchange_candidate> candidates;
};

}  // namespace transit
