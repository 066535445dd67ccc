#pragma once
// transit::request: a pending nonblocking one-sided operation (global_array::put_nb, get_nb,
// fetch_add_nb). One request may stand for several pieces (a transfer split over owners or into
// buffer-sized pieces); it completes when all of them have.
#include <memory>

#include "transit/detail/one_sided/engine.hpp"

namespace transit {

/// A pending nonblocking one-sided operation, returned by global_array's *_nb calls. Local to the
/// PE that issued it; movable and copyable (copies share the completion).
class request {
 public:
  /// Local: a request that is already complete.
  request() = default;

  /// Local, non-blocking: moves this PE's one-sided traffic a step and returns true once the
  /// operation is complete (put_nb: the values may be reused; get_nb, fetch_add_nb: the result
  /// is in place). Must be called before the global_array it came from is destroyed.
  bool test() {
    if (!state_ || state_->pending == 0) return true;
    engine_->progress();
    return state_->pending == 0;
  }
  /// Local: returns once test() would return true, serving requests meanwhile (polling mode).
  void wait() {
    if (state_ && state_->pending != 0) engine_->wait(*state_, "request::wait");
  }

 private:
  template <class T>
  friend class global_array;
  request(detail::one_sided_engine* engine, std::shared_ptr<detail::completion> state)
      : engine_(engine), state_(std::move(state)) {}

  detail::one_sided_engine* engine_ = nullptr;
  std::shared_ptr<detail::completion> state_;
};

}  // namespace transit
