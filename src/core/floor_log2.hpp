#pragma once
// Private to the library: profiles key their points, and transfers their choices, by floor(log2).
#include <bit>
#include <cstddef>

namespace transit::detail {
/// floor(log2 x), -1 for 0: profiles key their points by it (2^floor(log2 S), 2^floor(log2 N)).
inline int floor_log2(std::size_t x) noexcept { return x == 0 ? -1 : static_cast<int>(std::bit_width(x)) - 1; }
}  // namespace transit::detail
