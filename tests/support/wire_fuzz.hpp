#pragma once
// Shared by the wire fuzzers (tests/*/wire_fuzz_test.cpp): forged bytes sent raw on a channel, and
// the check that a receiver refused a message with the one report of src/core/wire_error.hpp.
#include <gtest/gtest.h>

#include <chrono>
#include <cstddef>
#include <cstring>
#include <string>
#include <thread>
#include <vector>

#include "core/wire_error.hpp"
#include "transit/detail/runtime/context_access.hpp"

namespace transit::testing {

/// Bytes built field by field, as a sender lays out a message.
class wire_bytes {
 public:
  template <class T>
  wire_bytes& add(const T& value) {
    const auto* p = reinterpret_cast<const std::byte*>(&value);
    bytes_.insert(bytes_.end(), p, p + sizeof(T));
    return *this;
  }
  wire_bytes& zeros(std::size_t n) {
    bytes_.resize(bytes_.size() + n);
    return *this;
  }
  std::vector<std::byte>& bytes() noexcept { return bytes_; }

 private:
  std::vector<std::byte> bytes_;
};

/// Sends `bytes` as one transport message to `dest` on `channel`.
inline void send_raw(context& ctx, int dest, std::uint32_t channel, const std::vector<std::byte>& bytes) {
  auto& net = detail::context_access::net(ctx);
  detail::message_buffer b = net.allocate(bytes.size());
  if (!bytes.empty()) std::memcpy(b.payload(), bytes.data(), bytes.size());
  b.set_size(bytes.size());
  net.send(dest, channel, std::move(b));
}

/// Runs `receive` (a receiver taking what arrived) until it throws a wire_error, and checks the
/// report: "<receiver>: corrupt <message> from PE <source>: ...<problem>...". Adds a test failure
/// and returns false if nothing was refused within `patience` (the sender's thread may be slow to
/// run on a loaded machine).
template <class Receive>
bool expect_refused(Receive&& receive, const std::string& receiver, const std::string& message, int source,
                    const std::string& problem, std::chrono::seconds patience = std::chrono::seconds(60)) {
  const std::string head = receiver + ": corrupt " + message + " from PE " + std::to_string(source) + ": ";
  const auto give_up = std::chrono::steady_clock::now() + patience;
  while (std::chrono::steady_clock::now() < give_up) {
    try {
      receive();
    } catch (const detail::wire_error& e) {
      const std::string text = e.what();
      EXPECT_EQ(text.substr(0, head.size()), head) << text;
      EXPECT_NE(text.find(problem), std::string::npos) << "expected '" << problem << "' in: " << text;
      return true;
    }
    std::this_thread::yield();
  }
  ADD_FAILURE() << "not refused: " << head << problem;
  return false;
}

}  // namespace transit::testing
