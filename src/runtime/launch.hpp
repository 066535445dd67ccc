#pragma once
// Private to the library: how transit::run (src/runtime/run.cpp), transit::session and
// transit::attach run the PEs of this process on the part of a job a backend started
// (transport/launch.hpp): one context over each PE's transport, the PE threads, failure reports.
// Nothing here names a backend: the seam answers by the name the options give.
#include <functional>
#include <memory>

#include "transit/runtime/context.hpp"
#include "transit/runtime/options.hpp"
#include "transit/runtime/session.hpp"
#include "transport/launch.hpp"

namespace transit::detail {

/// What a backend's launch needs of `options`.
launch_request launch_request_of(const run_options& options);

/// The PEs of one session in this process (transit::session forwards to it).
class session_launch {
 public:
  session_launch(std::unique_ptr<process_launch> process, const run_options& options);
  ~session_launch();
  int local_pes() const noexcept { return process_->local_pes(); }
  int size() const noexcept { return process_->size(); }
  /// The context of this process's one PE; null when it runs several, or after close().
  context* single_pe() noexcept { return context_.get(); }
  /// Runs `body` on every PE here (session::run). Throws what a PE threw (threads of one process)
  /// or the backend ends the job.
  void run(const std::function<void(context&)>& body);
  /// Collective (session::close). Idempotent.
  void close();

 private:
  void throw_recorded_failure(const process_transports& transports);

  std::unique_ptr<process_launch> process_;
  run_options options_;
  std::shared_ptr<const machine> machine_;
  std::shared_ptr<const topology_manager> topology_;
  std::unique_ptr<process_transports> transports_;  // one PE: its transports for the session's life
  std::unique_ptr<context> context_;
  bool closed_ = false;
  bool failure_said_ = false;
};

/// How transit::session reaches its launch (the constructor is private to the library).
struct session_access {
  static session make(std::unique_ptr<process_launch> process, const run_options& options) {
    return session(std::make_unique<session_launch>(std::move(process), options));
  }
};

/// transit::run's job: runs `body` on this process's PEs of the backend the options name. Returns
/// the exit status (a usage error: 2, said once; a failed PE: 1 or the job ends).
int run_job(const run_options& options, const std::function<void(context&)>& body);

}  // namespace transit::detail
