#include "common/gather.hpp"

#include <algorithm>
#include <stdexcept>
#include <string>
#include <utility>

namespace transit::apps {

namespace {

void check_target(std::span<const cyclic_place> places, std::span<std::int64_t> target, const char* where) {
  if (target.size() != places.size())
    throw std::invalid_argument(std::string(where) + ": a target of " + std::to_string(target.size()) +
                                " entries, expected one per place (" + std::to_string(places.size()) + ")");
}

}  // namespace

streamer_gather::streamer_gather(context& ctx, std::span<const std::int64_t> local)
    : ctx_(ctx),
      replies_(ctx, {}, [this](const reply& r) { target_[static_cast<std::size_t>(r.slot)] = r.value; }),
      requests_(ctx, {}, [this, local](const request& q, int source) {
        replies_.insert(reply{local[static_cast<std::size_t>(q.offset)], q.slot}, source);
      }) {}

void streamer_gather::run(std::span<const cyclic_place> places, std::span<std::int64_t> target) {
  check_target(places, target, "streamer_gather::run");
  target_ = target;
  const std::size_t n = places.size();
  for (std::size_t i = 0; i < n; ++i) {
    requests_.insert(request{places[i].offset, static_cast<std::int64_t>(i)}, places[i].pe);
    // Replies are inserted by the requests' callbacks: this PE serves its share of them while it
    // still has requests to send, rather than all at the end.
    if ((i & 255) == 255) replies_.progress();
  }
  requests_.finish();  // every request delivered, so every reply inserted
  replies_.finish();
}

void exchange_gather(context& ctx, std::span<const cyclic_place> places, std::span<const std::int64_t> local,
                     std::span<std::int64_t> target, std::int64_t buf_cnt) {
  check_target(places, target, "exchange_gather");
  if (buf_cnt < 1) throw std::invalid_argument("exchange_gather: buf_cnt " + std::to_string(buf_cnt) + ", expected >= 1");
  const auto pes = static_cast<std::size_t>(ctx.size());
  const auto limit = static_cast<std::size_t>(buf_cnt);
  sparse_exchange<std::int64_t> exchange(ctx);
  std::vector<const std::int64_t*> reply_from(pes);  // per PE, its next reply of the round
  std::size_t next = 0;
  const std::size_t total = places.size();
  for (;;) {
    // One exstack round: push requests until some destination's buffer is full, exchange,
    // answer each request in place, exchange the answers back, and retrace the round's requests
    // to take each answer in order from its PE.
    const std::size_t first = next;
    std::vector<parcel<std::int64_t>> outgoing(pes);
    for (std::size_t pe = 0; pe < pes; ++pe) outgoing[pe].peer = static_cast<int>(pe);
    for (; next < total; ++next) {
      auto& items = outgoing[static_cast<std::size_t>(places[next].pe)].items;
      if (items.size() == limit) break;
      items.push_back(places[next].offset);
    }
    const bool mine_sent = next == total;
    std::vector<parcel<std::int64_t>> asked = exchange.run(std::move(outgoing));
    for (auto& in : asked)
      for (std::int64_t& item : in.items) item = local[static_cast<std::size_t>(item)];
    const std::vector<parcel<std::int64_t>> answers = exchange.run(std::move(asked));
    for (const auto& in : answers) reply_from[static_cast<std::size_t>(in.peer)] = in.items.data();
    for (std::size_t j = first; j < next; ++j) target[j] = *reply_from[static_cast<std::size_t>(places[j].pe)]++;
    if (ctx.allreduce(mine_sent ? 0 : 1, reduce_op::sum) == 0) break;  // every PE has sent all
  }
}

void global_array_gather(global_array<std::int64_t>& table, std::size_t per_pe, std::span<const cyclic_place> places,
                         std::span<std::int64_t> target) {
  check_target(places, target, "global_array_gather");
  constexpr std::size_t batch = 16384;  // 1024 was 4x slower on 2 PEs (a round trip per batch)
  std::vector<region> sources;
  sources.reserve(std::min(batch, places.size()));
  const std::size_t n = places.size();
  for (std::size_t first = 0; first < n; first += batch) {
    const std::size_t count = std::min(batch, n - first);
    sources.clear();
    for (std::size_t i = first; i < first + count; ++i)
      sources.push_back({static_cast<std::size_t>(places[i].pe) * per_pe + static_cast<std::size_t>(places[i].offset), 1});
    table.get_regions(sources, target.subspan(first, count));
  }
}

}  // namespace transit::apps
