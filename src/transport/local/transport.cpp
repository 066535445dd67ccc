#include "transport/local/transport.hpp"

#include "transit/detail/core/error.hpp"

namespace transit::detail {

void local_transport::send_message(int dest, std::uint32_t channel, message_buffer&& data) {
  TRANSIT_ASSERT(dest >= 0 && dest < size(), "send to a PE outside the job");
  world_.deliver(dest, message{rank_, channel, std::move(data)});
}

void local_transport::send_confirmed_message(int dest, std::uint32_t channel, message_buffer&& data,
                                             const std::shared_ptr<send_confirmations>& pending) {
  TRANSIT_ASSERT(dest >= 0 && dest < size() && dest != rank_ && pending != nullptr,
                 "a confirmed send to this PE, outside the job or without a count");
  world_.deliver(dest, message{rank_, channel, std::move(data)}, pending);
}

std::size_t local_transport::poll_messages(std::vector<message>& sink, std::size_t) {
  return world_.drain(rank_, sink);
}

std::unique_ptr<collective_group> local_transport::make_group() {
  return make_local_group(world_.group(next_group_++));
}

}  // namespace transit::detail
