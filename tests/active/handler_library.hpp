#pragma once
#include <cstdint>

namespace transit {
class active_messages;
}

extern thread_local std::uint64_t library_calls;
extern thread_local std::uint64_t library_sum;
void library_handler(transit::active_messages&, std::uint64_t value);
