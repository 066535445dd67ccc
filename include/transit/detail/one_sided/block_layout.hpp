#pragma once
// The block distribution of a global_array: elements [0, size) over `pes` PEs in contiguous
// blocks, the first size % pes PEs holding one more. Shared by global_array and protocols/.
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

}  // namespace transit::detail
