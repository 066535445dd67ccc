// Multi-region transfers: splitting regions per owner and the three protocols
// (include/transit/detail/one_sided/transfers.hpp sets them out, and the layer direction).
#include "transit/detail/one_sided/transfers.hpp"

#include <algorithm>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <limits>
#include <random>
#include <string>

#include "automatic_protocol.hpp"
#include "core/floor_log2.hpp"
#include "transit/detail/core/error.hpp"
#include "transit/runtime/context.hpp"

namespace transit {

std::string_view to_string(transfer_protocol p) noexcept {
  switch (p) {
    case transfer_protocol::automatic: return "automatic";
    case transfer_protocol::blocking: return "blocking";
    case transfer_protocol::pipelined: return "pipelined";
    case transfer_protocol::packed: return "packed";
  }
  return "unknown";
}

transfer_protocol parse_transfer_protocol(std::string_view name) {
  for (const auto p : {transfer_protocol::automatic, transfer_protocol::blocking, transfer_protocol::pipelined,
                       transfer_protocol::packed})
    if (name == to_string(p)) return p;
  detail::throw_invalid("transfer protocol", name, "'automatic', 'blocking', 'pipelined' or 'packed'");
}

}  // namespace transit

namespace transit::detail {

protocol_selector::protocol_selector(const context& ctx)
    : ctx_(&ctx),
      self_node_(ctx.machine().node_of(ctx.rank())),
      random_(static_cast<std::minstd_rand::result_type>(std::random_device{}()) ^
              static_cast<std::minstd_rand::result_type>(ctx.rank() + 1)) {
  const char* env = std::getenv("TRANSIT_PROTOCOL");
  const std::string_view name = env != nullptr ? env : "";
  if (name.empty() || name == "automatic") return;
  if (name == "random") {
    mode_ = mode::random;
    return;
  }
  if (name != "blocking" && name != "pipelined" && name != "packed")
    throw_invalid("TRANSIT_PROTOCOL", name, "'random', 'blocking', 'pipelined', 'packed' or 'automatic'");
  mode_ = mode::forced;
  forced_ = parse_transfer_protocol(name);
}

transfer_protocol protocol_selector::draw() const {
  return static_cast<transfer_protocol>(1 + std::uniform_int_distribution<int>(0, 2)(random_));
}

transfer_protocol protocol_selector::for_call(transfer_protocol requested) const {
  if (requested != transfer_protocol::automatic) return requested;
  if (mode_ == mode::forced) return forced_;
  if (mode_ == mode::random) return draw();
  return transfer_protocol::automatic;
}

transfer_protocol protocol_selector::choose(std::size_t region_bytes, std::size_t regions, int target) const {
  if (target < 0 || target >= ctx_->size())
    throw std::out_of_range(concat("global_array::chosen_protocol: target ", target, " is outside [0, ", ctx_->size(),
                                   "): expected a PE"));
  if (mode_ == mode::forced) return forced_;
  if (mode_ == mode::random) return draw();
  if (!profile_) {
    profile_ = automatic_protocol_for(*ctx_);
    memo_.assign(2 * 64 * 64, 0);
  }
  const bool same_node = ctx_->machine().node_of(target) == self_node_;
  // automatic_protocol answers by (floor(log2 S), floor(log2 N)) alone, so that is the memo's key.
  const auto log2 = [](std::size_t x) { return static_cast<std::size_t>(floor_log2(std::max<std::size_t>(x, 1))); };
  std::uint8_t& known = memo_[(same_node ? 64 * 64 : 0) + log2(region_bytes) * 64 + log2(regions)];
  if (known == 0) known = static_cast<std::uint8_t>(profile_->choose(region_bytes, regions, same_node)) + 1;
  return static_cast<transfer_protocol>(known - 1);
}

std::vector<region> strided_regions(std::size_t index, std::size_t count, std::size_t stride, std::size_t blocks,
                                    std::size_t values, std::size_t array_size) {
  if (stride < count)
    throw std::invalid_argument(concat("global_array::put_strided: stride ", stride, " is less than count ", count,
                                       ": expected a stride of at least count elements"));
  if (blocks != 0 && count > std::numeric_limits<std::size_t>::max() / blocks)
    throw std::invalid_argument(concat("global_array::put_strided: ", blocks, " blocks of ", count,
                                       " elements overflow std::size_t"));
  if (values != count * blocks)
    throw std::invalid_argument(concat("global_array::put_strided: got ", values, " values, expected count x blocks = ",
                                       count, " x ", blocks, " = ", count * blocks));
  if (blocks == 0) return {};
  const std::size_t last = blocks - 1;
  if (index > array_size || (stride != 0 && last > (array_size - index) / stride) ||
      count > array_size - index - last * stride)
    throw std::out_of_range(concat("global_array::put_strided: ", blocks, " blocks of ", count, " elements from index ",
                                   index, " with stride ", stride, " run past the end of the array (size ",
                                   array_size, ")"));
  std::vector<region> regions(blocks);
  for (std::size_t b = 0; b < blocks; ++b) regions[b] = region{index + b * stride, count};
  return regions;
}

namespace {

/// A region's part on one owner.
struct piece {
  std::size_t owner;
  std::uint64_t offset;  // in the owner's block, elements
  std::uint64_t count;
  std::size_t first;     // position in the caller's data, elements
};

/// One packed request being built or in flight: records then (put) elements; get: the reply.
struct packed_message {
  std::vector<std::byte> payload;
  std::vector<std::byte> reply;
  std::vector<std::size_t> firsts;  // get: where each region's elements go in the caller's data
};

class transfer {
 public:
  transfer(one_sided_engine& engine, std::size_t element_size, transfer_direction direction, std::byte* data)
      : engine_(engine),
        element_(element_size),
        put_(direction == transfer_direction::put),
        data_(data),
        max_packed_(engine.max_packed_bytes()),
        packable_(packed_piece_limit(engine)) {}

  void blocking(std::span<const piece> pieces) {
    for (const piece& p : pieces) {
      completion one;
      engine_.issue(single(p), &one, nullptr);
      engine_.wait(one, put_ ? "global_array::put_regions (blocking)" : "global_array::get_regions (blocking)");
      if (put_) engine_.fence();  // complete at its target before the next starts
    }
  }

  void pipelined(std::span<const piece> pieces) {
    for (const piece& p : pieces) engine_.issue(single(p), done_.get(), done_);
  }

  void packed(std::span<const piece> pieces) {
    for (const piece& p : pieces) {
      const std::size_t bytes = static_cast<std::size_t>(p.count) * element_;
      if (bytes > packable_) {  // too large to pack: its own request, after what came before it
        send_open(p.owner);
        engine_.issue(single(p), done_.get(), done_);
        continue;
      }
      if (!fits(bytes)) send_open(p.owner);
      add(p, bytes);
    }
    if (!pieces.empty()) send_open(pieces.front().owner);
  }

  /// Waits for the pipelined and packed requests; get: unpacks the replies.
  void finish() {
    engine_.wait(*done_, put_ ? "global_array::put_regions" : "global_array::get_regions");
    for (const packed_message& m : sent_) {
      std::size_t at = 0;
      for (std::size_t i = 0; i < m.firsts.size(); ++i) {
        packed_region r;
        std::memcpy(&r, m.payload.data() + i * sizeof r, sizeof r);
        const std::size_t bytes = static_cast<std::size_t>(r.count) * element_;
        std::memcpy(data_ + m.firsts[i] * element_, m.reply.data() + at, bytes);
        at += bytes;
      }
    }
  }

 private:
  operation single(const piece& p) const {
    std::byte* at = data_ + p.first * element_;
    return operation{put_ ? op_code::put : op_code::get, reduce_op::sum, static_cast<int>(p.owner), p.offset, p.count,
                     put_ ? at : nullptr, put_ ? nullptr : at};
  }
  bool fits(std::size_t bytes) const noexcept {
    if (put_) return open_records_.size() * sizeof(packed_region) + open_bytes_ + sizeof(packed_region) + bytes <= max_packed_;
    return (open_records_.size() + 1) * sizeof(packed_region) <= max_packed_ && open_bytes_ + bytes <= max_packed_;
  }
  void add(const piece& p, std::size_t bytes) {
    open_records_.push_back(packed_region{p.offset, p.count});
    open_firsts_.push_back(p.first);
    open_bytes_ += bytes;
  }
  /// Sends the open message (the records so far) to `owner`.
  void send_open(std::size_t owner) {
    if (open_records_.empty()) return;
    packed_message& m = put_ ? staged_.emplace_back() : sent_.emplace_back();
    const std::size_t records = open_records_.size() * sizeof(packed_region);
    m.payload.resize(records + (put_ ? open_bytes_ : 0));
    std::memcpy(m.payload.data(), open_records_.data(), records);
    if (put_) {
      std::size_t at = records;
      for (std::size_t i = 0; i < open_records_.size(); ++i) {
        const std::size_t bytes = static_cast<std::size_t>(open_records_[i].count) * element_;
        std::memcpy(m.payload.data() + at, data_ + open_firsts_[i] * element_, bytes);
        at += bytes;
      }
    } else {
      m.reply.resize(open_bytes_);
      m.firsts = open_firsts_;
    }
    operation op{put_ ? op_code::put_packed : op_code::get_packed, reduce_op::sum, static_cast<int>(owner), 0,
                 open_records_.size(), m.payload.data(), put_ ? nullptr : m.reply.data(),
                 put_ ? m.payload.size() : open_bytes_};
    engine_.issue(op, done_.get(), done_);
    open_records_.clear();
    open_firsts_.clear();
    open_bytes_ = 0;
  }

  one_sided_engine& engine_;
  const std::size_t element_;
  const bool put_;
  std::byte* const data_;
  const std::size_t max_packed_;
  const std::size_t packable_;  // the largest piece that is packed
  // Passed as `keep` too: that is what makes an issue nonblocking (mpi_rma: MPI_Rput/MPI_Rget, no
  // flush per piece), so pipelined and packed pieces are all in flight before the one wait.
  const std::shared_ptr<completion> done_ = std::make_shared<completion>();
  std::vector<packed_region> open_records_;
  std::vector<std::size_t> open_firsts_;
  std::size_t open_bytes_ = 0;
  // Messages stay until finish(): a request waiting for buffer room reads its payload then.
  std::vector<packed_message> staged_;  // put
  std::vector<packed_message> sent_;    // get: unpacked in finish()
};

}  // namespace

void transfer_regions(one_sided_engine& engine, const element_layout& layout, const protocol_selector& selector,
                      transfer_direction direction, std::span<const region> regions, std::byte* data,
                      std::size_t elements, std::size_t element_size, transfer_protocol requested) {
  const char* what = direction == transfer_direction::put ? "global_array::put_regions" : "global_array::get_regions";
  std::size_t total = 0;
  for (std::size_t i = 0; i < regions.size(); ++i) {
    const region& r = regions[i];
    if (r.index > layout.size() || r.count > layout.size() - r.index)
      throw std::out_of_range(concat(what, ": region ", i, " [", r.index, ", ", r.index, " + ", r.count,
                                     ") runs past the end of the array (size ", layout.size(), ")"));
    total += r.count;
  }
  if (total != elements)
    throw std::invalid_argument(concat(what, ": got ", elements, direction == transfer_direction::put ? " values" : " output elements",
                                       ", expected the regions' total of ", total, " elements"));
  if (total == 0) return;

  // Pieces per owner, each owner's in region order.
  std::vector<piece> pieces;
  pieces.reserve(regions.size());
  std::size_t first = 0;
  for (const region& r : regions) {
    for (std::size_t done = 0; done < r.count;) {
      const std::size_t at = r.index + done;
      const std::size_t owner = layout.owner_of(at);
      const std::size_t n = layout.run_from(at, owner, r.count - done);
      pieces.push_back(piece{owner, layout.offset_of(at, owner), n, first + done});
      done += n;
    }
    first += r.count;
  }
  std::stable_sort(pieces.begin(), pieces.end(), [](const piece& a, const piece& b) { return a.owner < b.owner; });

  const transfer_protocol call = selector.for_call(requested);
  transfer t(engine, element_size, direction, data);
  // Owners that go blocking first: their fences then wait for nothing else of this call.
  std::vector<std::pair<std::span<const piece>, transfer_protocol>> groups;
  for (std::size_t begin = 0; begin < pieces.size();) {
    std::size_t end = begin;
    std::size_t bytes = 0;
    while (end < pieces.size() && pieces[end].owner == pieces[begin].owner) bytes += pieces[end++].count * element_size;
    const std::size_t n = end - begin;
    const transfer_protocol p =
        call != transfer_protocol::automatic
            ? call
            : selector.choose(bytes / n, n, static_cast<int>(pieces[begin].owner));
    groups.emplace_back(std::span<const piece>(pieces.data() + begin, n), p);
    begin = end;
  }
  for (const auto& [group, p] : groups)
    if (p == transfer_protocol::blocking) t.blocking(group);
  for (const auto& [group, p] : groups) {
    if (p == transfer_protocol::pipelined) t.pipelined(group);
    if (p == transfer_protocol::packed) t.packed(group);
  }
  t.finish();
}

}  // namespace transit::detail
