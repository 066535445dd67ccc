#include "transport/local/transport.hpp"

#include "transit/detail/core/error.hpp"

namespace transit::detail {

void local_transport::send_message(int dest, std::uint32_t channel, message_buffer&& data) {
  TRANSIT_ASSERT(dest >= 0 && dest < size(), "send to a PE outside the job");
  world_.deliver(dest, message{rank_, channel, std::move(data)});
}

std::size_t local_transport::poll_messages(std::vector<message>& sink, std::size_t) {
  return world_.drain(rank_, sink);
}

std::unique_ptr<collective_group> local_transport::make_group() {
  return make_local_group(world_.group(next_group_++));
}

}  // namespace transit::detail
