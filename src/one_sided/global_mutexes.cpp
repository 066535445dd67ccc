#include "transit/one_sided/global_mutexes.hpp"

#include "transit/detail/core/error.hpp"
#include "hub.hpp"

namespace transit {

global_mutexes::global_mutexes(context& ctx, int count, one_sided_options options) : ctx_(ctx), count_(count) {
  if (count < 1) detail::throw_invalid("global_mutexes count", count, "at least 1");
  held_.assign(static_cast<std::size_t>(count), false);
  detail::engine_config config;
  config.options = options;
  config.mutexes = true;
  config.element_size = detail::mutex_bytes;  // a ticket lock: next ticket, now serving
  config.local_elements = static_cast<std::size_t>((count - ctx.rank() + ctx.size() - 1) / ctx.size());  // m % P == rank
  config.what = "global_mutexes";
  engine_ = detail::make_one_sided_engine(ctx, config);
}

global_mutexes::~global_mutexes() = default;

void global_mutexes::check(int mutex, const char* what) const {
  if (mutex < 0 || mutex >= count_)
    throw std::out_of_range(detail::concat("global_mutexes::", what, ": mutex ", mutex, " is outside [0, ", count_,
                                           "): expected one of the ", count_, " mutexes"));
}

// A lock returns when granted; an unlock when handed to its endpoint (acknowledged by fence).
void global_mutexes::send(detail::op_code code, int mutex, const char* what) {
  detail::completion done;
  const detail::operation op{code, reduce_op::sum, mutex % ctx_.size(),
                             static_cast<std::uint64_t>(mutex / ctx_.size()), 1, nullptr, nullptr};
  engine_->issue(op, &done, nullptr);
  engine_->wait(done, what);
}

void global_mutexes::lock(int mutex) {
  check(mutex, "lock");
  if (held_[static_cast<std::size_t>(mutex)])
    throw std::logic_error(detail::concat("global_mutexes::lock: PE ", ctx_.rank(), " already holds mutex ", mutex,
                                          " (locking it again would wait forever)"));
  send(detail::op_code::lock, mutex, "global_mutexes::lock");
  held_[static_cast<std::size_t>(mutex)] = true;
}

void global_mutexes::unlock(int mutex) {
  check(mutex, "unlock");
  if (!held_[static_cast<std::size_t>(mutex)])
    throw std::logic_error(detail::concat("global_mutexes::unlock: PE ", ctx_.rank(), " does not hold mutex ", mutex,
                                          ": expected a mutex this PE locked"));
  detail::fence_all_engines(ctx_);  // release: the writes made under the mutex land first
  send(detail::op_code::unlock, mutex, "global_mutexes::unlock");
  held_[static_cast<std::size_t>(mutex)] = false;
}

}  // namespace transit
