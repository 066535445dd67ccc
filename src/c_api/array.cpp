// The C API's global arrays: transit_array_* on global_array<int64_t> and global_array<double>.
// Batched operations check every index first, then issue the elements' requests non-blocking and
// wait once (get, fetch_add); put and accumulate return once their values are buffered.
#include <cstdint>
#include <span>
#include <type_traits>
#include <memory>
#include <variant>
#include <vector>

#include "c_api/handles.hpp"
#include "transit/one_sided/global_array.hpp"

struct transit_array {
  transit_context* owner;
  std::variant<std::unique_ptr<transit::global_array<std::int64_t>>, std::unique_ptr<transit::global_array<double>>>
      array;
  std::vector<transit::request> pending;  // reused from call to call
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

// Issues issue(i) for each of `count` elements, then waits for all of them at once; no request is
// left for the next call, even on a failure.
template <class Issue>
void issue_all(std::vector<transit::request>& pending, std::size_t count, Issue&& issue) {
  struct clear_on_exit {
    std::vector<transit::request>& p;
    ~clear_on_exit() { p.clear(); }
  } clear{pending};
  for (std::size_t i = 0; i < count; ++i) pending.push_back(issue(i));
  for (auto& r : pending) r.wait();
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
    switch (type) {
      case TRANSIT_INT64: a->array = std::make_unique<transit::global_array<std::int64_t>>(pe, size); break;
      case TRANSIT_DOUBLE: a->array = std::make_unique<transit::global_array<double>>(pe, size); break;
      default:
        transit::detail::throw_invalid("transit_array_create: type", static_cast<int>(type),
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
    issue_all(a->pending, count, [&](std::size_t i) { return typed.put_nb(indices[i], std::span<const T>(v + i, 1)); });
  });
}

transit_status transit_array_get(transit_array* a, const uint64_t* indices, void* out, size_t count) {
  constexpr const char* call = "transit_array_get";
  return on_elements(a, call, indices, count, [&](auto& typed) {
    using T = typename std::remove_reference_t<decltype(typed)>::value_type;
    require(out, call, "out");
    T* o = static_cast<T*>(out);
    issue_all(a->pending, count, [&](std::size_t i) { return typed.get_nb(indices[i], std::span<T>(o + i, 1)); });
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
    // accumulate returns once the value is in a request buffer: no round trip per element.
    for (std::size_t i = 0; i < count; ++i) typed.accumulate(indices[i], std::span<const T>(v + i, 1), r);
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
    issue_all(a->pending, count, [&](std::size_t i) { return typed.fetch_add_nb(indices[i], d[i], old + i); });
  });
}

transit_status transit_array_sync(transit_array* a) {
  return on_array(a, "transit_array_sync", [](auto& typed) { typed.sync(); });
}

}
