// The C API's sparse exchange: transit_exchange_* on the exchange engine's run-time-sized path
// (detail::exchange_engine moves records of bytes, as it does for sparse_exchange<T>).
#include <algorithm>
#include <cstring>
#include <memory>
#include <numeric>
#include <vector>

#include "c_api/handles.hpp"
#include "transit/detail/exchange/engine.hpp"

struct transit_exchange {
  transit_context* owner;
  std::size_t item_bytes;
  transit::detail::exchange_engine engine;
  // Reused from run to run: the outgoing records, where each peer's items start, what arrived.
  transit::detail::outgoing_plan plan;
  std::vector<std::size_t> order;
  std::vector<std::size_t> first_item;
  std::vector<transit::detail::incoming_record> incoming;
  std::vector<std::byte> received;    // the received items of the last run, by source
  std::vector<std::size_t> offsets;   // size + 1 entries, in items
};

using namespace transit::c_api;

namespace {

// Checks the peers (std::out_of_range for one outside the job, std::invalid_argument for one
// given twice, naming its positions) and where each one's items start in `items`.
void check_peers(transit_exchange& x, const int* peers, const size_t* counts, std::size_t peer_count) {
  constexpr const char* call = "transit_exchange_run";
  const int size = x.engine.size();
  x.first_item.assign(peer_count + 1, 0);
  std::vector<long> seen(static_cast<std::size_t>(size), -1);
  for (std::size_t i = 0; i < peer_count; ++i) {
    const int p = peers[i];
    if (p < 0 || p >= size)
      throw std::out_of_range(transit::detail::concat(call, ": peers[", i, "] = ", p, " is outside [0, ", size,
                                                      "): expected a PE of the context; nothing was sent"));
    auto& at = seen[static_cast<std::size_t>(p)];
    if (at >= 0)
      throw std::invalid_argument(transit::detail::concat(call, ": peers[", i, "] = ", p, " is given twice (also peers[",
                                                          at, "]): expected each peer once; nothing was sent"));
    at = static_cast<long>(i);
    x.first_item[i + 1] = x.first_item[i] + counts[i];
  }
}

void run(transit_exchange& x, const int* peers, const size_t* counts, std::size_t peer_count, const std::byte* items,
         transit_received& result) {
  const int rank = x.engine.rank();
  const int size = x.engine.size();
  check_peers(x, peers, counts, peer_count);
  // One record per destination other than this PE, sorted by destination.
  x.order.resize(peer_count);
  std::iota(x.order.begin(), x.order.end(), std::size_t{0});
  std::sort(x.order.begin(), x.order.end(), [&](std::size_t a, std::size_t b) { return peers[a] < peers[b]; });
  x.plan.records.clear();
  x.plan.spans.clear();
  const std::byte* to_self = nullptr;
  std::size_t self_items = 0;
  for (const std::size_t i : x.order) {
    if (counts[i] == 0) continue;
    const std::byte* data = items + x.first_item[i] * x.item_bytes;
    if (peers[i] == rank) {
      to_self = data;
      self_items = counts[i];
      continue;
    }
    const std::uint64_t bytes = std::uint64_t{counts[i]} * x.item_bytes;
    x.plan.records.push_back(transit::detail::outgoing_record{peers[i], bytes, x.plan.spans.size(), 1});
    x.plan.spans.push_back(transit::detail::byte_span{data, bytes});
  }

  x.incoming.clear();
  x.engine.run(x.plan, x.incoming);

  // The items of each source, contiguous and in source order (this PE's own in its place).
  std::size_t total = self_items;
  for (const auto& r : x.incoming) total += static_cast<std::size_t>(r.bytes) / x.item_bytes;
  x.received.resize(total * x.item_bytes);
  x.offsets.assign(static_cast<std::size_t>(size) + 1, 0);
  std::size_t at = 0;  // items placed
  std::size_t next = 0;
  for (int source = 0; source < size; ++source) {
    x.offsets[static_cast<std::size_t>(source)] = at;
    const std::byte* data = nullptr;
    std::size_t n = 0;
    if (source == rank) {
      data = to_self;
      n = self_items;
    } else if (next < x.incoming.size() && x.incoming[next].source == source) {
      data = x.incoming[next].data;
      n = static_cast<std::size_t>(x.incoming[next].bytes) / x.item_bytes;
      ++next;
    }
    if (n != 0) std::memcpy(x.received.data() + at * x.item_bytes, data, n * x.item_bytes);
    at += n;
  }
  x.offsets[static_cast<std::size_t>(size)] = at;
  x.incoming.clear();
  x.engine.release();
  x.engine.count_delivered(std::uint64_t{at} * x.item_bytes);
  result.items = x.received.data();
  result.total = at;
  result.offsets = x.offsets.data();
}

}  // namespace

extern "C" {

transit_status transit_exchange_create(transit_context* ctx, size_t item_bytes, transit_exchange** out) {
  return guarded([&] {
    constexpr const char* call = "transit_exchange_create";
    require(out, call, "out");
    *out = nullptr;
    transit::context& pe = pe_of(ctx, call);
    check_item_bytes(item_bytes, call);
    *out = new transit_exchange{ctx, item_bytes, transit::detail::exchange_engine(pe, transit::exchange_options{}, item_bytes),
                                {}, {}, {}, {}, {}, {}};
    ++ctx->objects;
  });
}

transit_status transit_exchange_destroy(transit_exchange* x) { return destroy(x); }

transit_status transit_exchange_run(transit_exchange* x, const int* peers, const size_t* counts, size_t peer_count,
                                    const void* items, transit_received* received) {
  return guarded([&] {
    constexpr const char* call = "transit_exchange_run";
    checked(x, call, "exchange");
    require(received, call, "received");
    if (peer_count != 0) {
      require(peers, call, "peers");
      require(counts, call, "counts");
    }
    std::size_t total = 0;
    for (std::size_t i = 0; i < peer_count; ++i) total += counts[i];
    if (total != 0) require(items, call, "items");
    run(*x, peers, counts, peer_count, static_cast<const std::byte*>(items), *received);
  });
}

}
