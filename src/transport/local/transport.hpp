#pragma once
// The local backend: PEs are threads of one process. A message is a pointer hand-off into the
// destination's inbox, so payload bytes are never copied between PEs.
#include <chrono>
#include <cstdint>
#include <limits>
#include <memory>
#include <string>

#include "transit/detail/transport/transport.hpp"
#include "transport/local/world.hpp"

namespace transit::detail {

class local_transport final : public transport {
 public:
  local_transport(local_world& world, int rank) : world_(world), rank_(rank) {}
  int rank() const noexcept override { return rank_; }
  int size() const noexcept override { return world_.size(); }
  std::string_view backend() const noexcept override { return "local"; }
  int process() const noexcept override { return 0; }
  bool threads_of_one_process() const noexcept override { return true; }
  std::size_t pending_sends() const noexcept override { return 0; }
  std::unique_ptr<collective_group> make_group() override;
  void nap(std::chrono::nanoseconds longest) override { world_.nap(rank_, longest); }
  bool aborted() const noexcept override { return world_.aborted(); }
  void end_job(const std::string& why) override { world_.fail(rank_, why); }
  std::unique_ptr<node_memory> make_node_memory(const node_memory_setup& setup) override;
  /// Any size: the receiving PE's poll that drains its inbox confirms (local_world::drain), and
  /// the same poll hands the message over.
  std::size_t confirmable_bytes() const noexcept override { return std::numeric_limits<std::size_t>::max(); }

 private:
  void send_message(int dest, std::uint32_t channel, message_buffer&& data) override;
  void send_confirmed_message(int dest, std::uint32_t channel, message_buffer&& data,
                              const std::shared_ptr<send_confirmations>& pending) override;
  std::size_t poll_messages(std::vector<message>& sink, std::size_t max) override;
  local_world& world_;
  int rank_;
  std::uint64_t next_group_ = 0;
  std::uint64_t node_memories_made_ = 0;
};

}  // namespace transit::detail
