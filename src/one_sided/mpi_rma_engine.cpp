// request_topology::mpi_rma: the baseline a user would otherwise write with MPI-3 one-sided
// communication. One MPI_Win_allocate window per array on a communicator of its own, a lock_all
// epoch for the array's whole life, and per-operation flushes:
//   put -> MPI_Put + MPI_Win_flush_local        get -> MPI_Get + MPI_Win_flush
//   accumulate -> MPI_Accumulate + flush_local  fetch_add -> MPI_Fetch_and_op + MPI_Win_flush
//   compare_exchange -> MPI_Compare_and_swap + MPI_Win_flush
//   put_nb, get_nb, fetch_add_nb -> MPI_Rput, MPI_Rget, MPI_Rget_accumulate
//   fence -> MPI_Win_flush_all
// MPI orders accumulate-class operations to one location by default but not puts and gets, so an
// operation first flushes its target when an earlier unflushed put or get overlaps it there: the
// contract's "operations from one PE to one element apply in the order issued".
// Mutexes are ticket locks (FIFO): (next, serving) counters in the home's window; lock takes a
// ticket with MPI_Fetch_and_op and polls serving with MPI_Fetch_and_op(MPI_NO_OP); unlock adds one
// to serving.
#include <mpi.h>

#include <algorithm>
#include <climits>
#include <cstring>
#include <vector>

#include "transport/mpi_access.hpp"
#include "routed_engine.hpp"
#include "transit/detail/core/error.hpp"
#include "transit/runtime/context.hpp"

namespace transit::detail {

namespace {

MPI_Datatype mpi_type_of(scalar_kind kind) {
  switch (kind) {
    case scalar_kind::int8: return MPI_INT8_T;
    case scalar_kind::int16: return MPI_INT16_T;
    case scalar_kind::int32: return MPI_INT32_T;
    case scalar_kind::int64: return MPI_INT64_T;
    case scalar_kind::uint8: return MPI_UINT8_T;
    case scalar_kind::uint16: return MPI_UINT16_T;
    case scalar_kind::uint32: return MPI_UINT32_T;
    case scalar_kind::uint64: return MPI_UINT64_T;
    case scalar_kind::float32: return MPI_FLOAT;
    case scalar_kind::float64: return MPI_DOUBLE;
    case scalar_kind::long_double: return MPI_LONG_DOUBLE;
  }
  return MPI_DATATYPE_NULL;
}

MPI_Op mpi_op_of(reduce_op op) {
  switch (op) {
    case reduce_op::sum: return MPI_SUM;
    case reduce_op::min: return MPI_MIN;
    case reduce_op::max: return MPI_MAX;
  }
  return MPI_OP_NULL;
}

constexpr std::size_t max_piece = std::size_t{1} << 30;             // MPI counts are int

class mpi_rma_engine final : public one_sided_engine {
 public:
  mpi_rma_engine(context& ctx, const engine_config& config)
      : ctx_(ctx), config_(config), group_(context_access::net(ctx).make_group()) {
    mpi_check(MPI_Comm_dup(mpi_of(context_access::net(ctx)).comm(), &comm_), "MPI_Comm_dup");
    unit_ = config.mutexes ? mutex_bytes : config.element_size;
    const std::size_t bytes = config.local_elements * unit_;
    void* base = nullptr;
    // Across hosts over TCP Open MPI 4.1 has no component for this at MPI_THREAD_MULTIPLE: osc rdma
    // needs RDMA and atomics from a btl, osc sm one host, and Debian's openmpi-mca-params.conf
    // excludes osc pt2pt (which refuses MULTIPLE anyway) and ucx. Say so rather than just fail.
    mpi_check(MPI_Win_allocate(static_cast<MPI_Aint>(bytes), 1, MPI_INFO_NULL, comm_, &base, &window_),
              "MPI_Win_allocate (no osc component for this job? between hosts over TCP try --mca osc pt2pt "
              "with --transit-mpi-threads=funneled; docs/one_sided.md, \"The mpi_rma baseline\")");
    block_ = {static_cast<std::byte*>(base), bytes};
    if (config.mutexes || config.initialize == nullptr) {
      std::memset(block_.data(), 0, bytes);
    } else {
      config.initialize(block_.data(), config.local_elements);
    }
    if (config.ops != nullptr) type_ = mpi_type_of(config.ops->kind);
    outstanding_.resize(static_cast<std::size_t>(ctx.size()));
    mpi_check(MPI_Win_lock_all(MPI_MODE_NOCHECK, window_), "MPI_Win_lock_all");
    barrier("mpi-rma set-up (barrier)");  // every window initialised before any access
  }

  ~mpi_rma_engine() override {
    try {
      fence();
      barrier("mpi-rma teardown (barrier)");
    } catch (...) {
      // MPI ends the whole job on failure; nothing to save here.
    }
    MPI_Win_unlock_all(window_);
    MPI_Win_free(&window_);
    MPI_Comm_free(&comm_);
  }

  std::span<std::byte> local_block() noexcept override { return config_.mutexes ? std::span<std::byte>() : block_; }

  void issue(const operation& op, completion* done, std::shared_ptr<completion> keep) override {
    ++requests_sent_;
    if (op.code == op_code::put_packed || op.code == op_code::get_packed) {
      issue_unpacked(op, done, keep);  // counts its pieces
      return;
    }
    if (ctx_.machine().node_of(op.owner) != ctx_.machine().node_of(ctx_.rank())) ++operations_between_nodes_;
    if (op.code == op_code::lock || op.code == op_code::unlock) {
      mutex_operation(op, done);
      return;
    }
    const int target = op.owner;
    const MPI_Aint at = static_cast<MPI_Aint>(op.offset * unit_);
    const std::size_t bytes = op.count * unit_;
    const bool nonblocking = keep != nullptr;
    switch (op.code) {
      case op_code::put:
      case op_code::get:
        order_after(target, op.offset, op.count, false);
        for (std::size_t done_bytes = 0; done_bytes < bytes; done_bytes += max_piece) {
          const int n = static_cast<int>(std::min(max_piece, bytes - done_bytes));
          const MPI_Aint where = at + static_cast<MPI_Aint>(done_bytes);
          if (!nonblocking) {
            if (op.code == op_code::put) {
              mpi_check(MPI_Put(op.in + done_bytes, n, MPI_BYTE, target, where, n, MPI_BYTE, window_), "MPI_Put");
            } else {
              mpi_check(MPI_Get(op.out + done_bytes, n, MPI_BYTE, target, where, n, MPI_BYTE, window_), "MPI_Get");
            }
            continue;
          }
          MPI_Request r = MPI_REQUEST_NULL;
          if (op.code == op_code::put) {
            mpi_check(MPI_Rput(op.in + done_bytes, n, MPI_BYTE, target, where, n, MPI_BYTE, window_, &r), "MPI_Rput");
          } else {
            mpi_check(MPI_Rget(op.out + done_bytes, n, MPI_BYTE, target, where, n, MPI_BYTE, window_, &r), "MPI_Rget");
          }
          track(r, done, keep);
        }
        if (nonblocking) {
          remember(target, op.offset, op.count, false);
        } else if (op.code == op_code::put) {
          mpi_check(MPI_Win_flush_local(target, window_), "MPI_Win_flush_local");  // values reusable
          remember(target, op.offset, op.count, false);
        } else {
          flush(target);  // the data is here
        }
        return;
      case op_code::accumulate:
        TRANSIT_ASSERT(op.count <= INT_MAX, "an accumulate region fits an MPI count");
        order_after(target, op.offset, op.count, true);
        mpi_check(MPI_Accumulate(op.in, static_cast<int>(op.count), type_, target, at, static_cast<int>(op.count), type_,
                                 mpi_op_of(op.reduce), window_),
                  "MPI_Accumulate");
        mpi_check(MPI_Win_flush_local(target, window_), "MPI_Win_flush_local");
        remember(target, op.offset, op.count, true);
        return;
      case op_code::fetch_add:
        order_after(target, op.offset, 1, true);
        if (nonblocking) {
          MPI_Request r = MPI_REQUEST_NULL;
          mpi_check(MPI_Rget_accumulate(op.in, 1, type_, op.out, 1, type_, target, at, 1, type_, MPI_SUM, window_, &r),
                    "MPI_Rget_accumulate");
          track(r, done, keep);
          remember(target, op.offset, 1, true);
        } else {
          mpi_check(MPI_Fetch_and_op(op.in, op.out, type_, target, at, MPI_SUM, window_), "MPI_Fetch_and_op");
          flush(target);
        }
        return;
      case op_code::compare_exchange:
        order_after(target, op.offset, 1, true);
        // SimGrid's SMPI declares the compare buffer non-const; MPI only reads it.
        mpi_check(MPI_Compare_and_swap(op.in + unit_, const_cast<std::byte*>(op.in), op.out, type_, target, at, window_),
                  "MPI_Compare_and_swap");
        flush(target);
        return;
      case op_code::lock:
      case op_code::unlock:
      case op_code::put_packed:
      case op_code::get_packed:
        break;
    }
  }

  // MPI windows have no code at the target to unpack with: a packed request becomes one put or
  // get per region, issued together (the pipelined protocol over RMA).
  void issue_unpacked(const operation& op, completion* done, const std::shared_ptr<completion>& keep) {
    const bool put = op.code == op_code::put_packed;
    const std::byte* data = op.in + op.count * sizeof(packed_region);
    std::size_t moved = 0;
    for (std::uint64_t i = 0; i < op.count; ++i) {
      packed_region region;
      std::memcpy(&region, op.in + i * sizeof(packed_region), sizeof region);
      operation piece{put ? op_code::put : op_code::get, reduce_op::sum, op.owner, region.offset, region.count,
                      put ? data + moved : nullptr, put ? nullptr : op.out + moved};
      issue(piece, done, keep);
      moved += static_cast<std::size_t>(region.count) * unit_;
    }
  }

  std::size_t max_packed_bytes() const noexcept override { return max_piece; }

  bool progress() override {
    if (requests_.empty()) return false;
    std::vector<int> finished(requests_.size());
    int count = 0;
    mpi_check(MPI_Testsome(static_cast<int>(requests_.size()), requests_.data(), &count, finished.data(),
                           MPI_STATUSES_IGNORE),
              "MPI_Testsome");
    if (count == MPI_UNDEFINED || count == 0) return false;
    std::size_t kept = 0;
    for (std::size_t i = 0; i < requests_.size(); ++i) {
      if (requests_[i] == MPI_REQUEST_NULL) {
        --pending_[i].done->pending;
      } else {
        requests_[kept] = requests_[i];
        pending_[kept] = std::move(pending_[i]);
        ++kept;
      }
    }
    requests_.resize(kept);
    pending_.resize(kept);
    return true;
  }

  void wait(completion& c, std::string_view what) override {
    context_access::wait_until(
        ctx_,
        [&] {
          const bool progressed = progress();
          if (c.pending == 0) return step_result::done;
          return progressed ? step_result::progressed : step_result::idle;
        },
        what);
  }

  void fence() override {
    mpi_check(MPI_Win_flush_all(window_), "MPI_Win_flush_all");
    for (auto& ranges : outstanding_) ranges.clear();
    context_access::wait_until(
        ctx_,
        [&] {
          progress();
          return requests_.empty() ? step_result::done : step_result::idle;
        },
        concat(config_.what, "::fence"));
  }

  void sync() override {
    fence();
    barrier(concat(config_.what, "::sync"));
  }

  one_sided_stats stats() const override {
    one_sided_stats s;
    s.requests_sent = requests_sent_;
    s.links = static_cast<std::uint64_t>(ctx_.size() - 1);  // direct to every PE
    s.request_messages_between_nodes = operations_between_nodes_;
    if (config_.mutexes) s.requests_served = mutex_operations_here();
    return s;
  }

 private:
  struct range {
    std::uint64_t begin, end;
    bool atomic;
  };
  struct pending_request {
    completion* done;
    std::shared_ptr<completion> keep;
  };

  void barrier(std::string_view what) {
    group_->start_barrier();
    context_access::finish_collective(ctx_, *group_, what);
  }
  void flush(int target) {
    mpi_check(MPI_Win_flush(target, window_), "MPI_Win_flush");
    outstanding_[static_cast<std::size_t>(target)].clear();
  }
  // MPI orders accumulate-class operations to one location, not puts and gets: flush first when
  // an unflushed operation overlaps this one and either is a put or get.
  void order_after(int target, std::uint64_t offset, std::uint64_t count, bool atomic) {
    auto& ranges = outstanding_[static_cast<std::size_t>(target)];
    for (const auto& r : ranges) {
      if (r.begin < offset + count && offset < r.end && !(r.atomic && atomic)) {
        flush(target);
        return;
      }
    }
  }
  void remember(int target, std::uint64_t offset, std::uint64_t count, bool atomic) {
    auto& ranges = outstanding_[static_cast<std::size_t>(target)];
    if (ranges.size() >= 64) {
      flush(target);  // keep the overlap check short
      return;
    }
    ranges.push_back(range{offset, offset + count, atomic});
  }
  void track(MPI_Request r, completion* done, std::shared_ptr<completion> keep) {
    ++done->pending;
    requests_.push_back(r);
    pending_.push_back(pending_request{done, std::move(keep)});
  }

  // Lock and unlock requests applied to this PE's mutexes: tickets taken plus tickets served,
  // read atomically from this PE's own window (the operations never involve this PE's CPU).
  std::uint64_t mutex_operations_here() const {
    std::uint64_t total = 0;
    for (std::size_t m = 0; m < config_.local_elements; ++m) {
      for (const std::size_t field : {std::size_t{0}, std::size_t{8}}) {
        std::uint64_t value = 0;
        mpi_check(MPI_Fetch_and_op(nullptr, &value, MPI_UINT64_T, ctx_.rank(),
                                   static_cast<MPI_Aint>(m * mutex_bytes + field), MPI_NO_OP, window_),
                  "MPI_Fetch_and_op");
        mpi_check(MPI_Win_flush(ctx_.rank(), window_), "MPI_Win_flush");
        total += value;
      }
    }
    return total;
  }

  void mutex_operation(const operation& op, completion* done) {
    const int home = op.owner;
    const MPI_Aint at = static_cast<MPI_Aint>(op.offset * mutex_bytes);
    const std::uint64_t one = 1;
    if (op.code == op_code::unlock) {
      std::uint64_t ignored = 0;
      mpi_check(MPI_Fetch_and_op(&one, &ignored, MPI_UINT64_T, home, at + 8, MPI_SUM, window_), "MPI_Fetch_and_op");
      flush(home);
      return;
    }
    std::uint64_t ticket = 0;
    mpi_check(MPI_Fetch_and_op(&one, &ticket, MPI_UINT64_T, home, at, MPI_SUM, window_), "MPI_Fetch_and_op");
    flush(home);
    ++done->pending;
    context_access::wait_until(
        ctx_,
        [&] {
          std::uint64_t serving = 0;
          mpi_check(MPI_Fetch_and_op(nullptr, &serving, MPI_UINT64_T, home, at + 8, MPI_NO_OP, window_),
                    "MPI_Fetch_and_op");
          flush(home);
          return serving == ticket ? step_result::done : step_result::idle;
        },
        "global_mutexes::lock (mpi-rma ticket)");
    --done->pending;
  }

  context& ctx_;
  // This engine waits on MPI requests and windows of its own, which the transport cannot see
  // complete: while it lives, idle PEs poll rather than block in the transport.
  transport::polling_hold polling_{context_access::net(ctx_)};
  engine_config config_;
  std::unique_ptr<collective_group> group_;
  MPI_Comm comm_ = MPI_COMM_NULL;
  MPI_Win window_ = MPI_WIN_NULL;
  MPI_Datatype type_ = MPI_DATATYPE_NULL;
  std::size_t unit_ = 1;
  std::span<std::byte> block_;
  std::vector<std::vector<range>> outstanding_;  // by target: unflushed operations
  std::vector<MPI_Request> requests_;
  std::vector<pending_request> pending_;  // parallel to requests_
  std::uint64_t requests_sent_ = 0;
  std::uint64_t operations_between_nodes_ = 0;
  engine_registration registration_{ctx_, this};
};

}  // namespace

std::unique_ptr<one_sided_engine> make_mpi_rma_engine(context& ctx, const engine_config& config) {
  return std::make_unique<mpi_rma_engine>(ctx, config);
}

}  // namespace transit::detail
