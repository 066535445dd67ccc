#pragma once
// The calibrated profile: what `transit calibrate` measured on a machine, kept in one JSON file
// with a section per kind of calibration (streamer, transport, protocols), each holding entries
// keyed by backend, PEs per node and host name. The profile file (reading, writing, host keys) is
// a module of its own, below the runtime and every layer that reads or calibrates a section: it
// needs nothing but core. The cost model reads it for buffer_items = 0 and tune = true, the mpi
// launch for Open MPI's shared-memory settings, `transit info` to say what is in use. Location: TRANSIT_PROFILE, else $XDG_CACHE_HOME/transit/profile.json, else
// ~/.cache/transit/profile.json. File format: docs/tuning.md.
#include <cstddef>
#include <filesystem>
#include <map>
#include <memory>
#include <optional>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

#include "transit/detail/profile/profile_fwd.hpp"

namespace transit {

/// A profile file that cannot be read, parsed or written; the message names the file and says
/// what is wrong with it ("truncated", "not JSON", "streamer[0].links.intra.alpha_seconds: ...").
class profile_error : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

/// One point of the streaming bandwidth curve (thesis 2.3.1, figure 2.5b): one PE streams
/// messages of `message_bytes` payload to another, writing every byte at the source and reading
/// it at the destination.
struct bandwidth_point {
  std::size_t message_bytes = 0;    ///< payload bytes of each message
  double seconds_per_message = 0;   ///< measured time per message (sending and receiving PE alike)
  double bytes_per_second = 0;      ///< message_bytes / seconds_per_message
};

/// The costs of one kind of link, per PE, when every PE sends and receives (thesis table 2.2):
/// `alpha` per message (o_s + o_d: transit's whole per-message path and the transport's),
/// `beta` per byte of a message, `per_item` per item and hop (o_a: the routing step, the copy
/// into a buffer and the delivery, for 8-byte items).
struct link_costs {
  double alpha = 0;     ///< seconds per message
  double beta = 0;      ///< seconds per byte
  double per_item = 0;  ///< seconds per item per hop
};

/// The calibration of one kind of link (between PEs of one node, or of two nodes).
struct link_calibration {
  bool measured = false;  ///< false: the calibration job had no such link (one node, or one PE)
  /// The PEs that streamed (from_pe to to_pe); -1 when not measured.
  ///@{
  int from_pe = -1, to_pe = -1;
  ///@}
  link_costs costs;       ///< alpha, beta and per-item cost fitted to the measurements
  std::vector<bandwidth_point> curve;  ///< by message size, smallest first
  /// The same streaming of the network library's own messages, without transit's layers (mpi
  /// backend, one PE per rank: MPI_Isend and MPI_Irecv between the same two PEs, the same bytes
  /// written and read), at 0 and 8 bytes and the curve's sizes; empty where the backend has no
  /// network library (local) or PE threads share a rank. curve less raw_curve is transit's own
  /// cost per message. Profiles written before 2026-11-30 have none.
  std::vector<bandwidth_point> raw_curve;
};

/// The streamer section's entry for one (backend, PEs per node, host).
struct streamer_profile {
  std::string backend;       ///< "local" or "mpi" (part of the key)
  int pes_per_node = 0;      ///< PEs per node of the calibration job (part of the key)
  std::string host;          ///< this_host() of the calibration job (part of the key)
  int pes = 0;               ///< PEs of the calibration job
  int hardware_threads = 0;  ///< of the host
  std::string created;       ///< UTC, ISO 8601
  std::string single_copy;   ///< mpi: Open MPI's shared-memory single-copy mechanism in effect
  /// Between two PEs of one node (intra), and of two nodes (inter: measured only when the job
  /// had two nodes).
  ///@{
  link_calibration intra, inter;
  ///@}
  double peak_bytes_per_second = 0;  ///< of the curve the buffer sizes come from (inter-node if measured)
  /// Smallest message payload reaching 50%, 75% and 90% of that peak. buffer_items = 0 uses the
  /// 75% point only for a profile without calibrated costs (see streamer_options::buffer_items).
  ///@{
  std::size_t buffer_bytes_50 = 0, buffer_bytes_75 = 0, buffer_bytes_90 = 0;
  ///@}
};

/// The transport section's entry for one (backend, host): the mpi backend's choice of Open MPI's
/// shared-memory single-copy mechanism ("default": Open MPI's own, CMA on Linux; "none": copy in
/// and out of shared memory), from the mean bandwidth of 8 to 64 KiB messages under each.
struct transport_profile {
  std::string backend;       ///< "mpi" (the only backend with transport settings)
  int pes_per_node = 0;      ///< PEs per node of the job that measured last
  std::string host;          ///< this_host() of the measuring job (the key, with backend)
  std::map<std::string, double> single_copy_bandwidth;  ///< mechanism -> bytes per second measured
  std::string single_copy_choice;                       ///< empty until every mechanism is measured
};

/// The entry as the profile file holds it: one JSON object (for `transit calibrate --json`). Local.
std::string to_json_text(const streamer_profile& entry);

/// The file of profiles, for every section (protocols' too): TRANSIT_PROFILE when set (and not
/// empty), else $XDG_CACHE_HOME/transit/profile.json when XDG_CACHE_HOME is an absolute path (the
/// XDG Base Directory spec ignores a relative one), else $HOME/.cache/transit/profile.json. Local.
std::filesystem::path default_profile_path();
/// This host's name (entries of every section are keyed by it). Local.
std::string this_host();

/// A profile file read into memory: looked up, changed, and written back whole (sections and
/// fields this version does not know are kept). Local; not thread-safe.
class profile_file {
 public:
  /// Reads `path`; a file that does not exist is an empty profile. Throws profile_error naming
  /// the file and the problem for one that cannot be read, is not JSON (truncated, say) or does
  /// not hold a transit profile.
  static profile_file load(const std::filesystem::path& path);
  /// An empty profile to be written to `path` (replacing whatever is there when saved).
  static profile_file empty(const std::filesystem::path& path);

  /// The file this profile was loaded from and is saved to.
  const std::filesystem::path& path() const noexcept { return path_; }
  /// Whether the file existed when loaded.
  bool exists() const noexcept { return exists_; }

  /// The streamer entry for exactly this key, if any.
  std::optional<streamer_profile> find_streamer(std::string_view backend, int pes_per_node,
                                                std::string_view host) const;
  /// The entry for this backend and host whose PEs per node are closest to `pes_per_node` (the
  /// smaller on ties): what a job without an entry of its own uses. Sets `exact` accordingly.
  std::optional<streamer_profile> closest_streamer(std::string_view backend, int pes_per_node,
                                                   std::string_view host, bool& exact) const;
  /// The transport entry for this backend and host (any PEs per node), if any.
  std::optional<transport_profile> find_transport(std::string_view backend, std::string_view host) const;
  /// Every streamer entry, in file order.
  std::vector<streamer_profile> streamer_entries() const;

  /// Adds the entry, replacing one of the same key (backend, PEs per node, host), in memory only
  /// (save() writes the file).
  void put(const streamer_profile& entry);
  /// Adds the entry, replacing the one of the same backend and host, in memory only.
  void put(const transport_profile& entry);
  /// Writes the file: to a temporary file beside it, then renamed over it, so that a reader never
  /// sees half a profile. Creates the directory. Throws profile_error naming the file.
  void save() const;

 private:
  friend struct detail::profile_access;
  struct document;  // the JSON, kept out of this header (nlohmann-json is private to the library)
  profile_file(std::filesystem::path path, bool exists, std::shared_ptr<document> json);
  std::filesystem::path path_;
  bool exists_ = false;
  std::shared_ptr<document> json_;
};

/// What a job uses for its streamers: which file, and the entry for its backend, PEs per node and
/// host (or the closest one, or none). Local. Never throws: a file that cannot be used is
/// reported in `error`.
struct profile_status {
  std::filesystem::path path;                 ///< default_profile_path()
  bool file_exists = false;                   ///< whether that file exists (and could be read)
  std::optional<streamer_profile> streamer;   ///< the entry in use, if any
  bool exact = false;                         ///< the entry's key is this job's
  std::string error;                          ///< why the file could not be used (names it)
};
/// Local: the profile the streamers of a job of `backend` with `pes_per_node` PEs per node use on
/// this host (the file at default_profile_path() and the closest streamer entry for that key).
/// Never throws: a file that cannot be used is reported in profile_status::error. A running job
/// asks profile_in_use(ctx) (transit/model/model.hpp).
profile_status profile_in_use(std::string_view backend, int pes_per_node);

}  // namespace transit
