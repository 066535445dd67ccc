// transit::session: forwards to its launch (src/runtime/launch.hpp), which owns the PEs.
#include "transit/runtime/session.hpp"

#include <cstdio>
#include <exception>
#include <stdexcept>
#include <utility>

#include "transit/detail/core/error.hpp"
#include "runtime/launch.hpp"

namespace transit {

session::session(const run_options& options)
    : session(std::make_unique<detail::session_launch>(
          detail::session_backend_named(options.backend).open_session(detail::launch_request_of(options)), options)) {}

session::session(std::unique_ptr<detail::session_launch> launch) : launch_(std::move(launch)) {}

session::session(session&&) noexcept = default;

session& session::operator=(session&& other) noexcept {
  if (this != &other) {
    close_quietly();
    launch_ = std::move(other.launch_);
  }
  return *this;
}

session::~session() { close_quietly(); }

// A destructor cannot throw: what close() would throw is reported instead.
void session::close_quietly() noexcept {
  if (!launch_) return;
  try {
    launch_->close();
  } catch (const std::exception& e) {
    std::fprintf(stderr, "transit: session: closing failed: %s\n", e.what());
    std::fflush(stderr);
  }
  launch_.reset();
}

detail::session_launch& session::launch() const {
  if (!launch_) throw std::logic_error("transit::session: used after it was closed or moved from");
  return *launch_;
}

int session::local_pes() const noexcept { return launch_ ? launch_->local_pes() : 0; }
int session::size() const noexcept { return launch_ ? launch_->size() : 0; }

context& session::pe() {
  context* one = launch().single_pe();
  if (one == nullptr)
    throw std::logic_error(detail::concat("transit::session::pe: this process runs ", launch().local_pes(),
                                          " PEs, expected one: run a body on each with session::run"));
  return *one;
}

void session::run(const std::function<void(context&)>& body) { launch().run(body); }

void session::close() {
  if (!launch_) return;
  launch_->close();
  launch_.reset();
}

}  // namespace transit
