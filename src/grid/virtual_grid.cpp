#include "transit/grid/virtual_grid.hpp"

#include <algorithm>
#include <charconv>
#include <climits>
#include <cstdint>
#include <stdexcept>

#include "transit/detail/core/error.hpp"
#include "transit/topology/machine.hpp"

namespace transit {

namespace {

std::string join_dims(const std::vector<int>& dims) {
  std::string out;
  for (std::size_t d = 0; d < dims.size(); ++d) {
    if (d > 0) out += 'x';
    out += std::to_string(dims[d]);
  }
  return out;
}

void check_dims(const std::vector<int>& dims) {
  if (dims.empty()) detail::throw_invalid("grid dimensions", "none", "at least one dimension");
  for (std::size_t d = 0; d < dims.size(); ++d) {
    if (dims[d] < 1)
      detail::throw_invalid(detail::concat("size of dimension ", d, " of grid ", join_dims(dims)),
                            dims[d], "at least 1");
  }
}

std::int64_t slot_count(const std::vector<int>& dims) {
  std::int64_t slots = 1;
  for (const int size : dims) {
    slots *= size;
    if (slots > INT_MAX)
      detail::throw_invalid("number of slots of grid", join_dims(dims), "at most 2^31 - 1 slots");
  }
  return slots;
}

// A grid far larger than the job routes over slots no PE holds, and its slot table alone costs
// memory and time (a spec of "200000000" for 4 PEs took seconds to fail with bad_alloc).
std::int64_t max_slots(int num_pes) { return std::max<std::int64_t>(4096, std::int64_t{64} * num_pes); }

constexpr std::string_view spec_expectation =
    "dimension sizes joined by 'x' (such as '16x8' or '4x4x2'), 'direct' or 'node'";

}  // namespace

virtual_grid::virtual_grid(std::vector<int> dims, int num_pes) : dims_(std::move(dims)) {
  check_dims(dims_);
  if (num_pes < 1) detail::throw_invalid("number of PEs", num_pes, "at least 1");
  const std::int64_t slots = slot_count(dims_);
  if (slots < num_pes)
    detail::throw_invalid(detail::concat("number of slots of grid ", join_dims(dims_)), slots,
                          detail::concat("at least one per PE (", num_pes, " PEs)"));
  if (slots > max_slots(num_pes))
    detail::throw_invalid(detail::concat("number of slots of grid ", join_dims(dims_)), slots,
                          detail::concat("at most ", max_slots(num_pes), " for ", num_pes,
                                         " PEs (the larger of 4096 and 64 per PE)"));
  slot_of_.resize(num_pes);
  for (int pe = 0; pe < num_pes; ++pe) slot_of_[pe] = pe;
  index();
}

virtual_grid::virtual_grid(std::vector<int> dims, std::vector<int> slot_of_pe)
    : dims_(std::move(dims)), slot_of_(std::move(slot_of_pe)) {
  check_dims(dims_);
  slot_count(dims_);
  index();
}

void virtual_grid::index() {
  const int n = ndims();
  strides_.assign(n, 1);
  for (int d = n - 2; d >= 0; --d) strides_[d] = strides_[d + 1] * dims_[d + 1];
  num_slots_ = strides_[0] * dims_[0];
  num_pes_ = static_cast<int>(slot_of_.size());
  pe_of_slot_.assign(num_slots_, -1);
  for (int pe = 0; pe < num_pes_; ++pe) {
    TRANSIT_ASSERT(slot_of_[pe] >= 0 && slot_of_[pe] < num_slots_ && pe_of_slot_[slot_of_[pe]] < 0,
                   "every PE needs its own grid slot");
    pe_of_slot_[slot_of_[pe]] = pe;
  }
}

virtual_grid virtual_grid::direct(int num_pes) {
  if (num_pes < 1) detail::throw_invalid("number of PEs", num_pes, "at least 1");
  return virtual_grid({num_pes}, num_pes);
}

virtual_grid virtual_grid::node_pe(const machine& m) {
  const int width = m.max_pes_per_node();
  std::vector<int> slot_of_pe(m.num_pes());
  for (int pe = 0; pe < m.num_pes(); ++pe)
    slot_of_pe[pe] = m.node_of(pe) * width + m.local_rank(pe);
  return virtual_grid({m.num_nodes(), width}, std::move(slot_of_pe));
}

virtual_grid virtual_grid::balanced(int num_pes, int ndims) {
  if (num_pes < 1) detail::throw_invalid("number of PEs", num_pes, "at least 1");
  if (ndims < 1 || ndims > 31)
    detail::throw_invalid("number of grid dimensions", ndims, "between 1 and 31");
  // Largest base b with b^ndims <= num_pes; then raise the leading dimensions to b + 1 one at a
  // time until the grid holds every PE. Sizes differ by at most one, larger sizes first.
  const auto power_at_most = [&](std::int64_t base) {
    std::int64_t product = 1;
    for (int d = 0; d < ndims; ++d) {
      product *= base;
      if (product > num_pes) return false;
    }
    return true;
  };
  int base = 1;
  while (power_at_most(base + 1)) ++base;
  std::vector<int> dims(ndims, base);
  std::int64_t slots = 1;
  for (int d = 0; d < ndims; ++d) slots *= base;
  for (int d = 0; d < ndims && slots < num_pes; ++d) {
    slots = slots / base * (base + 1);
    dims[d] = base + 1;
  }
  return virtual_grid(std::move(dims), num_pes);
}

virtual_grid virtual_grid::parse(std::string_view spec, int num_pes) {
  return parse(spec, machine(num_pes));
}

virtual_grid virtual_grid::parse(std::string_view spec, const machine& m) {
  if (spec == "node") return node_pe(m);
  if (spec == "direct") return direct(m.num_pes());
  std::vector<int> dims;
  std::size_t begin = 0;
  while (true) {
    const std::size_t end = std::min(spec.find('x', begin), spec.size());
    const std::string_view part = spec.substr(begin, end - begin);
    int size = 0;
    const auto [rest, error] = std::from_chars(part.data(), part.data() + part.size(), size);
    if (part.empty() || error != std::errc{} || rest != part.data() + part.size())
      detail::throw_invalid("grid spec", spec, spec_expectation);
    dims.push_back(size);
    if (end == spec.size()) break;
    begin = end + 1;
  }
  return virtual_grid(std::move(dims), m.num_pes());
}

std::vector<int> virtual_grid::coords(int pe) const {
  check_pe(pe, "coords");
  std::vector<int> out(ndims());
  for (int d = 0; d < ndims(); ++d) out[d] = coord(pe, d);
  return out;
}

int virtual_grid::pe_at(std::span<const int> coordinates) const {
  if (static_cast<int>(coordinates.size()) != ndims())
    detail::throw_invalid("number of coordinates", coordinates.size(),
                          detail::concat(ndims(), " for grid ", str()));
  int slot = 0;
  for (int d = 0; d < ndims(); ++d) {
    if (coordinates[d] < 0 || coordinates[d] >= dims_[d]) return -1;
    slot += coordinates[d] * strides_[d];
  }
  return pe_of_slot_[slot];
}

void virtual_grid::check_pe(int pe, const char* where) const {
  if (pe < 0 || pe >= num_pes_)
    throw std::out_of_range(detail::concat("virtual_grid::", where, ": PE ", pe, " is outside [0, ", num_pes_,
                                           "): expected a PE of grid ", str()));
}

bool virtual_grid::is_peer(int a, int b) const { return distance(a, b) == 1; }

int virtual_grid::distance(int a, int b) const {
  check_pe(a, "distance");
  check_pe(b, "distance");
  int differing = 0;
  for (int d = 0; d < ndims(); ++d) differing += coord(a, d) != coord(b, d) ? 1 : 0;
  return differing;
}

std::vector<int> virtual_grid::peers(int pe) const {
  check_pe(pe, "peers");
  std::vector<int> out;
  const int slot = slot_of_[pe];
  for (int d = 0; d < ndims(); ++d) {
    const int own = coord(pe, d);
    for (int c = 0; c < dims_[d]; ++c) {
      if (c == own) continue;
      const int peer = pe_of_slot_[slot + (c - own) * strides_[d]];
      if (peer >= 0) out.push_back(peer);
    }
  }
  return out;
}

std::string virtual_grid::str() const { return join_dims(dims_); }

}  // namespace transit
