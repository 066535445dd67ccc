// The C API's global arrays: transit_array_* on global_array<int64_t> and global_array<double>.
// Batched operations check every index first, then run global_array's batched calls: put and
// accumulate issue element after element, waiting only for buffer room, and return when their
// values may be reused; get and fetch_add issue the batch as one request and wait for it once.
#include <cstdint>
#include <span>
#include <type_traits>
#include <memory>
#include <variant>

#include "c_api/handles.hpp"
#include "transit/one_sided/global_array.hpp"

struct transit_array {
  transit_context* owner;
  std::variant<std::unique_ptr<transit::global_array<std::int64_t>>, std::unique_ptr<transit::global_array<double>>>
      array;
};

using namespace transit::c_api;

namespace {

void check_indices(const std::uint64_t* indices, std::size_t count, std::size_t size,
                   const char* call) {
  if (count == 0) return;
  require(indices, call, "indices");
  for (std::size_t i = 0; i < count; ++i) {
    if (indices[i] >= size)
      throw std::out_of_range(transit::detail::concat(call, ": indices[", i, "] = ", indices[i], " is outside [0, ",
                                                      size, "): expected an element of the array; nothing was done"));
  }
}

// Runs op(typed array, T* values...) on the array's element type, after checking the handle.
template <class F>
transit_status on_array(transit_array* a, const char* call, F&& op) {
  return guarded([&] {
    checked(a, call, "array");
    std::visit([&](auto& typed) { op(*typed); }, a->array);
  });
}

// on_array for a batch of `count` elements at `indices`: checks every index first; nothing to do
// for none.
template <class F>
transit_status on_elements(transit_array* a, const char* call, const std::uint64_t* indices, std::size_t count, F&& op) {
  return on_array(a, call, [&](auto& typed) {
    check_indices(indices, count, typed.size(), call);
    if (count != 0) op(typed);
  });
}

}  // namespace

extern "C" {

transit_status transit_array_create(transit_context* ctx, size_t size, transit_type type, transit_array** out) {
  return guarded([&] {
    constexpr const char* call = "transit_array_create";
    require(out, call, "out");
    *out = nullptr;
    transit::context& pe = pe_of(ctx, call);
    auto a = std::make_unique<transit_array>();
    a->owner = ctx;
    switch (c_enum_value(type)) {
      case TRANSIT_INT64: a->array = std::make_unique<transit::global_array<std::int64_t>>(pe, size); break;
      case TRANSIT_DOUBLE: a->array = std::make_unique<transit::global_array<double>>(pe, size); break;
      default:
        transit::detail::throw_invalid("transit_array_create: type", c_enum_value(type),
                                       "TRANSIT_INT64 or TRANSIT_DOUBLE");
    }
    *out = a.release();
    ++ctx->objects;
  });
}

transit_status transit_array_destroy(transit_array* a) { return destroy(a); }

size_t transit_array_size(const transit_array* a) {
  if (a == nullptr) {
    fail(TRANSIT_INVALID_ARGUMENT, "transit_array_size: array: got NULL, expected a handle from transit_array_create");
    return 0;
  }
  return std::visit([](const auto& typed) { return typed->size(); }, a->array);
}

transit_status transit_array_local(transit_array* a, void** data, size_t* first, size_t* count) {
  constexpr const char* call = "transit_array_local";
  return on_array(a, call, [&](auto& typed) {
    require(data, call, "data");
    require(first, call, "first");
    require(count, call, "count");
    const auto block = typed.local();
    *data = block.data();
    *first = typed.local_begin();
    *count = block.size();
  });
}

transit_status transit_array_put(transit_array* a, const uint64_t* indices, const void* values, size_t count) {
  constexpr const char* call = "transit_array_put";
  return on_elements(a, call, indices, count, [&](auto& typed) {
    using T = typename std::remove_reference_t<decltype(typed)>::value_type;
    require(values, call, "values");
    const T* v = static_cast<const T*>(values);
    typed.put(std::span(indices, count), std::span<const T>(v, count));
  });
}

transit_status transit_array_get(transit_array* a, const uint64_t* indices, void* out, size_t count) {
  constexpr const char* call = "transit_array_get";
  return on_elements(a, call, indices, count, [&](auto& typed) {
    using T = typename std::remove_reference_t<decltype(typed)>::value_type;
    require(out, call, "out");
    T* o = static_cast<T*>(out);
    typed.get_nb(std::span(indices, count), std::span<T>(o, count)).wait();
  });
}

transit_status transit_array_accumulate(transit_array* a, const uint64_t* indices, const void* values, size_t count,
                                        transit_op op) {
  constexpr const char* call = "transit_array_accumulate";
  return on_elements(a, call, indices, count, [&](auto& typed) {
    using T = typename std::remove_reference_t<decltype(typed)>::value_type;
    const transit::reduce_op r = to_op(op, call);
    require(values, call, "values");
    const T* v = static_cast<const T*>(values);
    typed.accumulate(std::span(indices, count), std::span<const T>(v, count), r);
  });
}

transit_status transit_array_fetch_add(transit_array* a, const uint64_t* indices, const void* deltas,
                                       void* old_values, size_t count) {
  constexpr const char* call = "transit_array_fetch_add";
  return on_elements(a, call, indices, count, [&](auto& typed) {
    using T = typename std::remove_reference_t<decltype(typed)>::value_type;
    require(deltas, call, "deltas");
    require(old_values, call, "old_values");
    const T* d = static_cast<const T*>(deltas);
    T* old = static_cast<T*>(old_values);
    typed.fetch_add_nb(std::span(indices, count), std::span<const T>(d, count), std::span<T>(old, count)).wait();
  });
}

transit_status transit_array_sync(transit_array* a) {
  return on_array(a, "transit_array_sync", [](auto& typed) { typed.sync(); });
}

}
