// The local backend's transports of one job (src/transport/local_transports.hpp).
#include "transport/local_transports.hpp"

#include "transport/local/transport.hpp"
#include "transport/local/world.hpp"

namespace transit::detail {

local_job_transports::local_job_transports(int pes) : world_(std::make_unique<local_world>(pes)) {}
local_job_transports::~local_job_transports() = default;

std::unique_ptr<transport> local_job_transports::make(int pe) { return std::make_unique<local_transport>(*world_, pe); }
void local_job_transports::fail(int pe, std::string what) { world_->fail(pe, std::move(what)); }
bool local_job_transports::aborted() const noexcept { return world_->aborted(); }
std::optional<std::pair<int, std::string>> local_job_transports::first_failure() const { return world_->first_failure(); }

}  // namespace transit::detail
