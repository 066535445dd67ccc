#pragma once
// A virtual N-dimensional grid of PEs (TRAM thesis, chapter 3). Items are aggregated per peer of
// this grid and routed one dimension at a time. Coordinates are row-major, the last dimension
// varying fastest; a grid may have more slots than PEs (partially populated).
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace transit {

class machine;

/// A virtual grid of PEs: which slot each PE takes, who its peers are. Immutable after
/// construction; every query is local and thread-safe.
class virtual_grid {
 public:
  /// PEs fill slots 0..num_pes-1 in row-major order, so only the leading block may be partly
  /// empty. Throws std::invalid_argument for a dimension < 1, product(dims) < num_pes, or more
  /// slots than the larger of 4096 and 64 per PE (a grid that large routes over empty slots).
  virtual_grid(std::vector<int> dims, int num_pes);

  /// 1-D: every PE is a peer of every other (aggregation at the source only). Throws
  /// std::invalid_argument when num_pes < 1.
  static virtual_grid direct(int num_pes);
  /// 2-D: nodes x PEs per node; PE p sits at (node_of(p), local_rank(p)). Uneven nodes leave holes.
  static virtual_grid node_pe(const machine& m);
  /// `ndims` dimensions of near-equal size whose product is the smallest >= num_pes found. Throws
  /// std::invalid_argument when num_pes < 1 or ndims is outside 1..31.
  static virtual_grid balanced(int num_pes, int ndims);
  /// "16x8", "4x4x2", "direct", "node" (needs a machine: uses one node unless given). Throws
  /// std::invalid_argument naming the spec and what was expected, or as the constructor.
  static virtual_grid parse(std::string_view spec, int num_pes);
  /// As parse(spec, num_pes), with "node" meaning node_pe(m).
  static virtual_grid parse(std::string_view spec, const machine& m);

  /// Dimensions of the grid.
  int ndims() const noexcept { return static_cast<int>(dims_.size()); }
  /// Size of each dimension.
  std::span<const int> dims() const noexcept { return dims_; }
  /// PEs placed on the grid.
  int num_pes() const noexcept { return num_pes_; }
  /// Slots of the grid: the product of dims(), at least num_pes().
  int num_slots() const noexcept { return num_slots_; }
  /// Stride of dimension d in the row-major slot index (precomputed). Unchecked.
  int stride(int d) const { return strides_[d]; }

  /// Coordinates of `pe`; std::out_of_range for a PE outside [0, num_pes()).
  std::vector<int> coords(int pe) const;
  /// Coordinate `d` of `pe`, decoded alone (one division and one modulo). Unchecked: for routers'
  /// inner loops, with pe in [0, num_pes()) and d in [0, ndims()).
  int coord(int pe, int d) const { return (slot_of_[pe] / strides_[d]) % dims_[d]; }
  /// PE at the given coordinates, or -1 for an empty slot.
  int pe_at(std::span<const int> coords) const;
  /// PE in a slot index, or -1 for an empty slot. Slots are row-major. Unchecked.
  int pe_at_slot(int slot) const { return pe_of_slot_[slot]; }
  /// Slot of `pe`. Unchecked.
  int slot_of(int pe) const { return slot_of_[pe]; }
  /// True when a and b differ in exactly one coordinate. std::out_of_range for a PE outside the grid.
  bool is_peer(int a, int b) const;
  /// Number of coordinates in which a and b differ (messages an item needs from a to b under
  /// minimal routing). std::out_of_range for a PE outside the grid.
  int distance(int a, int b) const;
  /// Populated peers of `pe`, by dimension then coordinate. std::out_of_range for a bad PE.
  std::vector<int> peers(int pe) const;
  /// "4x4x2"
  std::string str() const;

  /// Same dimensions and the same slot for every PE.
  friend bool operator==(const virtual_grid& a, const virtual_grid& b) {
    return a.dims_ == b.dims_ && a.slot_of_ == b.slot_of_;
  }

 private:
  virtual_grid(std::vector<int> dims, std::vector<int> slot_of_pe);
  void index();
  void check_pe(int pe, const char* where) const;
  std::vector<int> dims_;
  std::vector<int> strides_;
  std::vector<int> slot_of_;     // PE -> slot
  std::vector<int> pe_of_slot_;  // slot -> PE or -1
  int num_pes_ = 0;
  int num_slots_ = 0;
};

}  // namespace transit
