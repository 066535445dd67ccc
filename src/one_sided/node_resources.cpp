#include "node_resources.hpp"

#include <cstdlib>
#include <cstring>
#include <new>
#include <vector>

#include "transport/local/local_transport.hpp"
#include "transit/detail/core/backoff.hpp"
#include "transit/detail/core/error.hpp"
#include "transit/runtime/context.hpp"
#include "transit/detail/runtime/context_access.hpp"

namespace transit::detail {

namespace {

class local_node_resources final : public node_resources {
 public:
  local_node_resources(context& ctx, std::uint32_t channel, std::size_t part_bytes) : ctx_(ctx) {
    const machine& m = ctx.machine();
    const int node = m.node_of(ctx.rank());
    const int local = m.local_rank(ctx.rank());
    const int pes = m.pes_on_node(node);
    master_ = local == 0;
    first_pe_ = ctx.rank() == 0;
    parts_.assign(static_cast<std::size_t>(pes), nullptr);
    // The node's first PE learns every part's size, makes one allocation and hands out addresses;
    // PE 0 makes the helpers' world and hands its address to every node's first PE.
    std::vector<std::uint64_t> sizes(static_cast<std::size_t>(pes), 0);
    sizes[static_cast<std::size_t>(local)] = align64(part_bytes);
    int sizes_missing = master_ ? pes - 1 : 0;
    bool parts_missing = true;
    bool world_missing = master_ && !first_pe_;
    if (!master_) send_setup_values(ctx, channel, m.pe_on_node(node, 0), setup_tag::part_size, {static_cast<std::uint64_t>(local), part_bytes});
    if (first_pe_) {
      world_ = new local_world(m.num_nodes());
      for (int n = 1; n < m.num_nodes(); ++n)
        send_setup_values(ctx, channel, m.pe_on_node(n, 0), setup_tag::world, {reinterpret_cast<std::uintptr_t>(world_)});
    }
    const auto hand_out_parts = [&] {
      std::size_t total = 0;
      for (const auto s : sizes) total += s;
      block_ = static_cast<std::byte*>(std::aligned_alloc(64, std::max<std::size_t>(total, 64)));
      if (block_ == nullptr) throw std::bad_alloc();
      std::vector<std::uint64_t> addresses;
      std::size_t offset = 0;
      for (std::size_t l = 0; l < sizes.size(); ++l) {
        parts_[l] = block_ + offset;
        addresses.push_back(reinterpret_cast<std::uintptr_t>(parts_[l]));
        offset += sizes[l];
      }
      for (int l = 1; l < pes; ++l) send_setup_values(ctx, channel, m.pe_on_node(node, l), setup_tag::parts, addresses);
      parts_missing = false;
    };
    if (master_ && sizes_missing == 0) hand_out_parts();
    receive_setup_values(
        ctx, channel,
        [&](setup_tag tag, const std::vector<std::uint64_t>& v) {
          switch (tag) {
            case setup_tag::part_size:
              sizes[v[0]] = align64(v[1]);
              if (--sizes_missing == 0) hand_out_parts();
              break;
            case setup_tag::parts:
              for (std::size_t l = 0; l < parts_.size(); ++l) parts_[l] = reinterpret_cast<std::byte*>(v[l]);
              parts_missing = false;
              break;
            case setup_tag::world:
              world_ = reinterpret_cast<local_world*>(v[0]);
              world_missing = false;
              break;
          }
        },
        [&] { return !parts_missing && !world_missing; }, "helper-mode set-up (shared memory)");
  }

  // The engine ends with a barrier after its helpers stopped: nobody touches this memory now.
  ~local_node_resources() override {
    if (abandoned_) return;
    if (master_) std::free(block_);
    if (first_pe_) delete world_;
  }

  std::byte* part(int local) const override { return parts_[static_cast<std::size_t>(local)]; }
  std::unique_ptr<transport> make_helper_transport() override {
    return std::make_unique<local_transport>(*world_, ctx_.machine().node_of(ctx_.rank()));
  }
  void abandon() noexcept override { abandoned_ = true; }

 private:
  context& ctx_;
  bool master_ = false;
  bool first_pe_ = false;
  bool abandoned_ = false;
  std::byte* block_ = nullptr;
  local_world* world_ = nullptr;
  std::vector<std::byte*> parts_;
};

}  // namespace

node_resources::~node_resources() {
  if (helper_.joinable()) stop_helper();
}

void node_resources::start_helper(std::function<bool()> round, std::function<void(const std::exception&)> failed) {
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

void node_resources::stop_helper() {
  stop_.store(true, std::memory_order_release);
  if (helper_.joinable()) helper_.join();
}

void send_setup_values(context& ctx, std::uint32_t channel, int dest, setup_tag tag, const std::vector<std::uint64_t>& values) {
  transport& net = context_access::net(ctx);
  message_buffer b = net.allocate((values.size() + 1) * sizeof(std::uint64_t));
  const auto t = static_cast<std::uint64_t>(tag);
  std::memcpy(b.payload(), &t, sizeof t);
  if (!values.empty()) std::memcpy(b.payload() + sizeof t, values.data(), values.size() * sizeof(std::uint64_t));
  b.set_size((values.size() + 1) * sizeof(std::uint64_t));
  net.send(dest, channel, std::move(b));
}

void receive_setup_values(context& ctx, std::uint32_t channel,
                          const std::function<void(setup_tag, const std::vector<std::uint64_t>&)>& take,
                          const std::function<bool()>& complete, const char* what) {
  std::vector<message> batch;
  context_access::wait_until(
      ctx,
      [&] {
        batch.clear();
        if (!context_access::mail(ctx).take(channel, batch)) return complete() ? step_result::done : step_result::idle;
        for (auto& msg : batch) {
          std::uint64_t tag = 0;
          std::memcpy(&tag, msg.data.payload(), sizeof tag);
          std::vector<std::uint64_t> values(msg.data.size() / sizeof(std::uint64_t) - 1);
          if (!values.empty())
            std::memcpy(values.data(), msg.data.payload() + sizeof tag, values.size() * sizeof(std::uint64_t));
          context_access::net(ctx).recycle(std::move(msg.data));
          take(static_cast<setup_tag>(tag), values);
        }
        return complete() ? step_result::done : step_result::progressed;
      },
      what);
}

std::unique_ptr<node_resources> make_node_resources(context& ctx, std::uint32_t channel, std::size_t part_bytes) {
#ifdef TRANSIT_WITH_MPI
  if (ctx.backend() == "mpi") return make_mpi_node_resources(ctx, channel, part_bytes);
#endif
  return std::make_unique<local_node_resources>(ctx, channel, part_bytes);
}

}  // namespace transit::detail
