#pragma once
// Run-time protocol selection for multi-region transfers (Iancu and Hofmeyr 2008; docs/protocols.md).
// The transfers are members of global_array<T> (put_regions, get_regions, put_strided,
// chosen_protocol), with regions and protocols in one_sided/regions.hpp; this header holds the
// measured profiles `automatic` chooses from and their section of the profile file, which
// one_sided reads itself (src/one_sided/protocol_profile.cpp). Their calibration runs global
// arrays, so it is the protocols layer above (transit/protocols/calibrate_protocols.hpp);
// transit/protocols/protocols.hpp forwards here.
#include <cstddef>
#include <filesystem>
#include <optional>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

#include "transit/one_sided/regions.hpp"

namespace transit {

class context;

/// A profile file that cannot be read, parsed or written; the message names the file and the problem.
class protocol_profile_error : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

/// One measured point: the time of one transfer of `regions` regions of `region_bytes` each to
/// one target with each fixed protocol (seconds; maximum over PE pairs, all PEs active).
struct protocol_point {
  std::size_t region_bytes = 0;  ///< S: bytes per region (a power of two)
  std::size_t regions = 0;       ///< N: regions per transfer (a power of two)
  /// Seconds per transfer with each fixed protocol; 0 = not measured.
  ///@{
  double blocking = 0, pipelined = 0, packed = 0;
  ///@}
  /// Local: the fixed protocol with the lowest time (blocking on ties, then pipelined).
  transfer_protocol fastest() const noexcept;
  /// Local: the time of fixed protocol `p` (blocking, pipelined or packed; automatic reads packed's).
  double seconds(transfer_protocol p) const noexcept;
};

/// The profile of one kind of target (PEs of this node, or of other nodes).
struct protocol_table {
  bool measured = false;  ///< false: the calibration job had no such pair
  std::vector<protocol_point> points;  ///< the measured (S, N) grid
  /// The point at (2^floor(log2 S), 2^floor(log2 N)), or the nearest measured one (in log2
  /// steps); nullptr when the table is empty. Local.
  const protocol_point* lookup(std::size_t region_bytes, std::size_t regions) const noexcept;
  /// The protocol `automatic` takes at `at` (a point of this table): the lowest time after
  /// smoothing over the grid. Each protocol's log time over the point's fastest, capped at
  /// log 1.5 (one point's burst must not outvote a neighbour's clear lead), is summed over the
  /// point (weight 2) and its four neighbours one log2 step away in S or N (weight 1 each).
  /// Close protocols swap places with noise from one run to the next; the
  /// neighbours follow the same per-region and per-byte costs, so their ranking steadies the
  /// point's. Points with a time of 0 take no part; `at` itself then decides alone. Local.
  transfer_protocol smoothed_fastest(const protocol_point& at) const noexcept;
};

/// The "protocols" entry of a profile file for one (backend, PEs per node, host).
struct protocol_profile {
  std::string backend;   ///< "local" or "mpi" (part of the key)
  int pes_per_node = 0;  ///< PEs per node of the calibration job (part of the key)
  std::string host;      ///< protocol_profile_host() of the calibration job (part of the key)
  int pes = 0;           ///< PEs of the calibration job
  std::string created;  ///< UTC, ISO 8601
  std::string source;   ///< "built-in", or the file it was read from
  /// Targets on the caller's node (intra) and on other nodes (inter).
  ///@{
  protocol_table intra, inter;
  ///@}
  /// What `automatic` takes for S bytes per region, N regions, to a target on this node or not:
  /// the table's smoothed_fastest at its lookup point (the other table when this one was not
  /// measured); the built-in rule when neither was. Local.
  transfer_protocol choose(std::size_t region_bytes, std::size_t regions, bool same_node) const noexcept;
};

/// The rule used without a calibrated profile: packed for regions of at most 512 bytes when
/// there are two or more, pipelined otherwise (docs/protocols.md says why). Local.
transfer_protocol builtin_protocol_choice(std::size_t region_bytes, std::size_t regions) noexcept;

/// The profile file: default_profile_path() (transit/profile/profile.hpp), the one rule for every
/// section of the file. Local.
std::filesystem::path protocol_profile_path();

/// Local. The "protocols" entry of `path` for this backend and host with the PEs per node
/// closest to `pes_per_node` (the smaller on ties); nullopt when the file does not exist or has
/// no such entry. Throws protocol_profile_error naming the file and the problem when it cannot be
/// read, is not JSON (truncated, say), or holds a malformed entry.
std::optional<protocol_profile> load_protocol_profile(const std::filesystem::path& path, std::string_view backend,
                                                      int pes_per_node, std::string_view host);
/// Local. Writes `entry` into the "protocols" section of `path`, replacing the entry of the same
/// key and keeping everything else in the file; written to a temporary file and renamed.
/// Throws protocol_profile_error naming the file.
void save_protocol_profile(const std::filesystem::path& path, const protocol_profile& entry);
/// The entry as one JSON object (for --json). Local.
std::string to_json_text(const protocol_profile& entry);

/// What `automatic` uses in this job: the profile entry of protocol_profile_path() for the job's
/// backend, PEs per node and host, else the built-in rule (source "built-in"); `error` says why a
/// file could not be used (automatic then throws it). Local; read once per process and path.
struct protocol_profile_status {
  std::filesystem::path path;   ///< protocol_profile_path()
  bool from_file = false;       ///< an entry of that file is in use (false: the built-in rule)
  std::string description;  ///< one line for `transit info`
  std::string error;        ///< why the file could not be used; empty when it could
};
/// Local: the protocol_profile_status of this job. Never throws: a file that cannot be used is
/// reported in protocol_profile_status::error. Thread-safe.
protocol_profile_status protocol_profile_in_use(const context& ctx);

/// The host name profile entries are keyed by: this_host() (transit/profile/profile.hpp). Local.
std::string protocol_profile_host();

}  // namespace transit
