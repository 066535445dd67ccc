#pragma once
// The block distribution of a global_array: elements [0, size) over `pes` PEs in contiguous
// blocks, the first size % pes PEs holding one more. Shared by global_array and protocols/. And
// element_layout: the block or the cyclic layout, as global_array and its transfers see it.
#include <algorithm>
#include <cstddef>

namespace transit::detail {

struct block_layout {
  std::size_t size = 0;
  std::size_t pes = 1;
  std::size_t base = 0;   // elements per PE, rounded down
  std::size_t extra = 0;  // PEs holding one more

  block_layout() = default;
  block_layout(std::size_t elements, std::size_t num_pes) noexcept
      : size(elements), pes(num_pes), base(elements / num_pes), extra(elements % num_pes) {}

  /// Global index of the first element of `pe` (pe == pes: size).
  std::size_t begin_of(std::size_t pe) const noexcept { return pe * base + std::min(pe, extra); }
  /// The PE holding `index` (index < size).
  std::size_t owner_of(std::size_t index) const noexcept {
    const std::size_t large = extra * (base + 1);  // elements on the PEs holding one more
    return index < large ? index / (base + 1) : extra + (index - large) / base;
  }
};

/// Where global_array's elements live under either layout (one_sided/options.hpp: array_layout).
/// Both put size / pes elements on every PE and one more on the first size % pes, so only the
/// mapping between global index and (owner, offset) differs.
struct element_layout {
  block_layout block;
  bool cyclic = false;

  element_layout() = default;
  element_layout(std::size_t elements, std::size_t num_pes, bool is_cyclic) noexcept
      : block(elements, num_pes), cyclic(is_cyclic) {}

  std::size_t size() const noexcept { return block.size; }
  /// The PE holding `index` (index < size).
  std::size_t owner_of(std::size_t index) const noexcept { return cyclic ? index % block.pes : block.owner_of(index); }
  /// The offset of `index` in its owner's local elements.
  std::size_t offset_of(std::size_t index, std::size_t owner) const noexcept {
    return cyclic ? index / block.pes : index - block.begin_of(owner);
  }
  /// Elements held by `pe`.
  std::size_t elements_on(std::size_t pe) const noexcept { return block.begin_of(pe + 1) - block.begin_of(pe); }
  /// The global index of local element `offset` of `pe`.
  std::size_t index_of(std::size_t pe, std::size_t offset) const noexcept {
    return cyclic ? offset * block.pes + pe : block.begin_of(pe) + offset;
  }
  /// How many of the `count` elements from `index` (on `owner`) sit next to each other both in
  /// the owner's memory and in the caller's: a block's remainder, or under cyclic one element
  /// (its neighbours live on other PEs) unless there is one PE.
  std::size_t run_from(std::size_t index, std::size_t owner, std::size_t count) const noexcept {
    if (cyclic) return block.pes == 1 ? count : 1;
    return std::min(count, block.begin_of(owner + 1) - index);
  }
};

}  // namespace transit::detail
