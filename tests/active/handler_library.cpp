// A handler defined in a shared library: its function pointer travels as (library, offset), and
// the library is loaded at a different address in every process.
#include "handler_library.hpp"

thread_local std::uint64_t library_calls = 0;
thread_local std::uint64_t library_sum = 0;

void library_handler(transit::active_messages&, std::uint64_t value) {
  ++library_calls;
  library_sum += value;
}
