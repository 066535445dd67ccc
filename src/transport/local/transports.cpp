// The local backend's transports of one job (src/transport/local_transports.hpp).
#include "transport/local_transports.hpp"

#include "transport/local/transport.hpp"
#include "transport/local/world.hpp"

namespace transit::detail {

namespace {

class local_job_transports final : public process_transports {
 public:
  explicit local_job_transports(int pes) : world_(pes) {}
  std::unique_ptr<transport> make(int pe) override { return std::make_unique<local_transport>(world_, pe); }
  void end_job(int pe, std::string what) override { world_.fail(pe, std::move(what)); }
  bool aborted() const noexcept override { return world_.aborted(); }
  std::optional<std::pair<int, std::string>> first_failure() const override { return world_.first_failure(); }

 private:
  local_world world_;
};

}  // namespace

std::unique_ptr<process_transports> make_local_transports(int pes) {
  return std::make_unique<local_job_transports>(pes);
}

}  // namespace transit::detail
