#pragma once
// Communication patterns to try mappings on (tests, `transit map`, and users who want to see what
// mapping buys before writing their own edges): periodic stencils, a random sparse graph, and an
// OpenAtom-like pattern with the hand-made "prism" placement of Bhatele et al. Everything here is
// local and deterministic.
#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "transit/mapping/mapping.hpp"

namespace transit {

/// Objects 0..num_objects-1 and the bytes they exchange.
struct comm_pattern {
  std::string name;  ///< e.g. "stencil3d 32x32x32", "openatom 128x32"
  int num_objects = 0;           ///< objects are numbered 0..num_objects-1
  std::vector<comm_edge> edges;  ///< who sends how many bytes to whom in one step
};

/// A periodic stencil over a grid of objects (row-major, the last dimension fastest): every object
/// sends `bytes` to its next neighbour along every dimension of size > 1 (wrapping), so it talks
/// to 2 x ndims neighbours. Local. Throws std::invalid_argument for no dimensions, a size < 1, or more
/// than INT_MAX objects.
comm_pattern stencil_pattern(std::span<const int> dims, std::uint64_t bytes);

/// A random sparse graph: every object sends to `degree` other objects chosen uniformly, each edge
/// 1..max_bytes bytes. The same seed gives the same graph on every platform. Local. Throws
/// std::invalid_argument for num_objects < 2, degree < 1 or max_bytes < 1.
comm_pattern random_pattern(int num_objects, int degree, std::uint64_t max_bytes, std::uint64_t seed);

/// Sizes of the OpenAtom-like pattern (Bhatele et al., "OpenAtom: a case study"). The paper's
/// WATER_32M_70Ry has 128 electronic states (32 molecules x 4); each state is split into planes.
struct openatom_sizes {
  int states = 128;                   ///< electronic states, n_s
  int planes = 32;                    ///< planes per state (GSpace and RealSpace alike here)
  int state_block = 32;               ///< states per pair-calculator block (the paper's grain)
  std::uint64_t plane_bytes = 16384;  ///< bytes of one state's plane
};

/// Object numbering of the OpenAtom-like pattern: the GSpace array G(s, p), the RealSpace array
/// R(s, p), the density arrays RhoR(p) and RhoG(p) (one per plane), and the pair calculators
/// P(i, j, p) for state blocks i, j (states / state_block blocks, rounded up). Immutable; every
/// query is local.
class openatom_layout {
 public:
  /// Throws std::invalid_argument for states, planes or state_block < 1, plane_bytes < planes
  /// (a transpose piece would be empty), or more than INT_MAX objects.
  explicit openatom_layout(const openatom_sizes& sizes);

  /// The sizes it was built from.
  const openatom_sizes& sizes() const noexcept { return sizes_; }
  /// State blocks: states / state_block, rounded up.
  int blocks() const noexcept { return blocks_; }
  /// Objects of all arrays together.
  int num_objects() const noexcept { return pairs_ + blocks_ * blocks_ * sizes_.planes; }
  /// The object G(state, plane). Arguments are not checked (the result is only an index).
  int gspace(int state, int plane) const noexcept { return state * sizes_.planes + plane; }
  /// The object R(state, plane). Arguments are not checked.
  int realspace(int state, int plane) const noexcept { return realspace_ + gspace(state, plane); }
  /// The object RhoR(plane). Arguments are not checked.
  int density_real(int plane) const noexcept { return density_ + plane; }
  /// The object RhoG(plane). Arguments are not checked.
  int density_g(int plane) const noexcept { return density_ + sizes_.planes + plane; }
  /// The object P(block_a, block_b, plane). Arguments are not checked.
  int pair(int block_a, int block_b, int plane) const noexcept {
    return pairs_ + (block_a * blocks_ + block_b) * sizes_.planes + plane;
  }

 private:
  openatom_sizes sizes_;
  int blocks_ = 1;
  int realspace_ = 0;  // first object of each array
  int density_ = 0;
  int pairs_ = 0;
};

/// The pattern of one OpenAtom-like step, every message one edge from sender to receiver:
///  - transposes (state-wise): G(s, p) -> R(s, q) and back, plane_bytes / planes each, for all p, q;
///  - density (plane-wise): R(s, p) -> RhoR(p) and back, plane_bytes each; RhoR(p) <-> RhoG(q)
///    transposes, plane_bytes / planes each way;
///  - pair calculators (plane-wise, pairing states): G(s, p) -> P(i, j, p) when s is in block i or
///    block j, and the reduction back, plane_bytes each.
/// Local; throws as openatom_layout does.
comm_pattern openatom_pattern(const openatom_sizes& sizes);

/// The paper's hand-made placement: the machine is cut into one "prism" per GSpace plane along its
/// longest node dimension (consecutive lines in snake order, so neighbouring prisms touch), and the
/// states of a plane are laid out in increasing order along the prism's long axis; R(s, *) goes on
/// the PEs of G(s, *) by the paper's Algorithm 1 (each plane on the free PE of that list closest to
/// its first); RhoR(p) near the medoid of R(*, p)'s PEs, RhoG(p) next to RhoR(p) but not on its
/// PE; P(i, j, p) near the medoid of G(block i, p) and G(block j, p). No PE gets more than
/// ceil(objects / PEs) objects (a full PE passes its object to the closest PE with room). Works on
/// a job that fills only part of the machine. Local; throws as openatom_layout does.
std::vector<int> openatom_prism_mapping(const topology_manager& topo, const openatom_sizes& sizes);

}  // namespace transit
