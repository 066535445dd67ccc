// The local backend's launch (transport/local_transports.hpp): every PE of the job a thread of this
// process, on one local world per run.
#include <algorithm>
#include <atomic>
#include <cstdio>
#include <memory>
#include <stdexcept>
#include <thread>

#include "transit/detail/core/error.hpp"
#include "transport/launch.hpp"
#include "transport/local_transports.hpp"

namespace transit::detail {

namespace {

class local_process final : public process_launch {
 public:
  local_process(int pes, int pes_per_node, bool count_given)
      : pes_(pes), machine_(emulated_machine(pes, pes_per_node)), count_given_(count_given) {}
  int local_pes() const noexcept override { return pes_; }
  int size() const noexcept override { return pes_; }
  int first_pe() const noexcept override { return 0; }
  std::shared_ptr<const machine> job_machine() const override { return machine_; }
  std::unique_ptr<process_transports> open_transports() override { return make_local_transports(pes_); }
  const char* pe_count_option() const noexcept override { return count_given_ ? "--transit-pes" : "the hardware threads"; }

  // More PEs than hardware threads run, time-sharing the cores: what developing a 64-PE program
  // on a laptop needs. Said once per process (a test binary starts many jobs), on stderr, and only
  // once the job has run a second: a job that ends sooner was not slow to wait for.
  void after_a_second() const override {
    static std::atomic<bool> warned{false};
    const unsigned threads = std::max(1u, std::thread::hardware_concurrency());
    if (static_cast<unsigned>(pes_) <= threads || warned.exchange(true)) return;
    std::fprintf(stderr,
                 "transit: warning: %d PEs on %u hardware threads: the local backend runs them all, sharing the "
                 "cores, so it will be slower than with at most %u PEs\n",
                 pes_, threads, threads);
    std::fflush(stderr);
  }

 private:
  int pes_;
  std::shared_ptr<const machine> machine_;
  bool count_given_;
};

class local_backend final : public backend_launch {
 public:
  int run_program(const launch_request& request, const std::function<int(process_launch&)>& main) override {
    const int pes = request.pes > 0 ? request.pes : std::max(1, static_cast<int>(std::thread::hardware_concurrency()));
    local_process process(pes, request.pes_per_node, request.pes > 0);
    try {
      return main(process);
    } catch (const std::invalid_argument& e) {  // options that only the job's size can judge
      std::fprintf(stderr, "transit: error: %s\n", e.what());
      return 2;
    }
  }
  std::unique_ptr<process_launch> open_session(const launch_request& request) override {
    if (request.threads_per_rank > 1)
      throw_invalid("transit::session: options.threads_per_rank", request.threads_per_rank,
                    "1 with the local backend (its PEs are threads already: options.pes)");
    return std::make_unique<local_process>(request.pes > 0 ? request.pes : 1, request.pes_per_node, request.pes > 0);
  }
};

}  // namespace

backend_launch& local_backend_launch() {
  static local_backend backend;
  return backend;
}

}  // namespace transit::detail
