// grid: records routed dimension by dimension over a virtual grid by the grid router (TRAM's
// routing, docs/routing.md), all records of one hop aggregated into one message. Protocol:
// include/transit/detail/exchange/engine.hpp.
#include <algorithm>

#include "methods.hpp"
#include "transit/grid/router.hpp"

namespace transit::detail {

namespace {

class grid_method final : public exchange_method_impl {
 public:
  grid_method(exchange_port& port, const virtual_grid& grid)
      : port_(port), router_(make_router(routing::grid, grid, port.ctx().machine())) {
    const int self = port.rank();
    links_ = router_->out_links(self);  // sorted by (phase, pe)
    batches_.resize(links_.size());
    for (const hop& l : links_) TRANSIT_ASSERT(grid.is_peer(self, l.pe), "a grid hop moves along one dimension");
    // In-links per phase. Every hop joins grid peers (asserted above on each PE for its own
    // links), so only the peers' routes need scanning: O(peers * P) next-hop evaluations, where
    // router::in_links scans all senders (O(P^2) on a 2-D grid).
    std::vector<hop> in;
    for (const int sender : grid.peers(self)) {
      for (int dest = 0; dest < grid.num_pes(); ++dest) {
        if (dest == sender) continue;
        const hop h = router_->next_hop(sender, dest, -1);
        if (h.pe == self) in.push_back(hop{sender, h.phase});
      }
    }
    std::sort(in.begin(), in.end(), [](const hop& a, const hop& b) { return a.phase != b.phase ? a.phase < b.phase : a.pe < b.pe; });
    in.erase(std::unique(in.begin(), in.end()), in.end());
    expected_.assign(static_cast<std::size_t>(router_->num_phases()), 0);
    for (const hop& h : in) ++expected_[static_cast<std::size_t>(h.phase)];
  }

  bool uses_transport() const noexcept override { return true; }

  std::uint64_t run(exchange_run& r) override {
    const int self = port_.rank();
    for (const auto& record : r.out.records) {
      batches_[link_of(router_->next_hop(self, record.dest, -1))].add(
          held_record{record.dest, self, record.bytes, nullptr, &record});
    }
    std::uint64_t largest = r.volume;
    std::size_t link = 0;
    for (int phase = 0; phase < router_->num_phases(); ++phase) {
      const auto step = static_cast<std::uint16_t>(phase);
      for (; link < links_.size() && links_[link].phase == phase; ++link)
        send_batch(port_, r.out, links_[link].pe, exchange_message_kind::phase, step, largest, batches_[link]);
      const int expected = expected_[static_cast<std::size_t>(phase)];
      const std::uint64_t seen = receive_records(
          port_, exchange_message_kind::phase, step, expected, "sparse_exchange grid (phase message)",
          [&](const held_record& record, int from) {
            if (record.dest == self) {
              r.in.push_back(incoming_record{record.source, record.data, record.bytes});
              return;
            }
            // Grid routes raise the phase at every hop: a record that arrives here in this phase
            // and cannot leave in a later one was not on its route.
            const hop next = router_->next_hop(self, record.dest, phase);
            if (next.phase <= phase)
              port_.corrupt(from, "phase message",
                            concat("a record for PE ", record.dest, " in phase ", phase, ", off its grid route"));
            batches_[link_of(next)].add(record);
          });
      largest = std::max(largest, seen);
    }
    finish_sends(port_);
    return largest;
  }

 private:
  std::size_t link_of(const hop& h) const {
    const auto it = std::lower_bound(links_.begin(), links_.end(), h, [](const hop& a, const hop& b) {
      return a.phase != b.phase ? a.phase < b.phase : a.pe < b.pe;
    });
    TRANSIT_ASSERT(it != links_.end() && *it == h, "next hop is not among the out-links");
    return static_cast<std::size_t>(it - links_.begin());
  }

  exchange_port& port_;
  std::unique_ptr<router> router_;
  std::vector<hop> links_;
  std::vector<record_batch> batches_;
  std::vector<int> expected_;  // in-links per phase
};

}  // namespace

std::unique_ptr<exchange_method_impl> make_grid_method(exchange_port& port, const virtual_grid& grid) {
  return std::make_unique<grid_method>(port, grid);
}

}  // namespace transit::detail
