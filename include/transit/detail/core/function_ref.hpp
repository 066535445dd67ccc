#pragma once
// A non-owning reference to a callable: what a waiting loop takes, so that the loop itself lives
// in the library (one indirect call per step, never an allocation). __builtin_addressof (GCC and
// Clang) is std::addressof without <memory>, which this header would otherwise be the only one to need.
#include <type_traits>
#include <utility>

namespace transit::detail {

template <class Signature>
class function_ref;

template <class R, class... Args>
class function_ref<R(Args...)> {
 public:
  template <class F>
    requires(!std::is_same_v<std::remove_cvref_t<F>, function_ref> && std::is_invocable_r_v<R, F&, Args...>)
  function_ref(F&& f) noexcept  // NOLINT: implicit, as a std::function parameter would be
      : object_(const_cast<void*>(static_cast<const void*>(__builtin_addressof(f)))),
        call_([](void* object, Args... args) -> R {
          return (*static_cast<std::remove_reference_t<F>*>(object))(std::forward<Args>(args)...);
        }) {}
  R operator()(Args... args) const { return call_(object_, std::forward<Args>(args)...); }

 private:
  void* object_;
  R (*call_)(void*, Args...);
};

}  // namespace transit::detail
