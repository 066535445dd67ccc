#include "transport/node_memory.hpp"

#include <stdexcept>

#include "core/backoff.hpp"

namespace transit::detail {

std::unique_ptr<node_memory> transport::make_node_memory(const node_memory_setup& setup) {
  if (setup.helper) throw std::logic_error("this transport has no node-shared memory for one-sided helper mode");
  if (setup.why_not != nullptr) *setup.why_not = "this transport has no node-shared memory";
  return nullptr;
}

node_memory::~node_memory() {
  if (helper_.joinable()) stop_helper();
}

void node_memory::start_helper(std::function<bool()> round, std::function<void(const std::exception&)> failed) {
  stop_.store(false, std::memory_order_relaxed);
  helper_ = std::thread([this, round = std::move(round), failed = std::move(failed)] {
    backoff pause;
    try {
      while (!stop_.load(std::memory_order_acquire)) {
        if (round()) {
          pause.reset();
        } else {
          pause.idle();  // 2 cores, many PEs: an idle helper must not spin
        }
      }
    } catch (const std::exception& e) {
      failed(e);
    }
  });
}

void node_memory::stop_helper() {
  stop_.store(true, std::memory_order_release);
  if (helper_.joinable()) helper_.join();
}

void part_rendezvous::give_size(int member, std::uint64_t bytes) {
  std::lock_guard lock(mutex_);
  sizes_[static_cast<std::size_t>(member)] = bytes;
  ++given_;
}

bool part_rendezvous::sizes_given() const {
  std::lock_guard lock(mutex_);
  return given_ == sizes_.size();
}

std::vector<std::uint64_t> part_rendezvous::sizes() const {
  std::lock_guard lock(mutex_);
  return sizes_;
}

void part_rendezvous::publish(std::vector<std::byte*> parts) {
  std::lock_guard lock(mutex_);
  parts_ = std::move(parts);
  published_ = true;
}

bool part_rendezvous::published() const {
  std::lock_guard lock(mutex_);
  return published_;
}

std::vector<std::byte*> part_rendezvous::parts() const {
  std::lock_guard lock(mutex_);
  return parts_;
}

}  // namespace transit::detail
