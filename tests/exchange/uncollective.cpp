// run() called on some PEs only: every PE runs the exchange once, then PE 1 destroys its exchange
// while the others run it again. The job ends with a message naming the exchange (or the late
// arrival on its closed channel), never a hang and never a silent loss.
#include "transit/transit.hpp"

int main(int argc, char** argv) {
  return transit::run(argc, argv, [&](transit::context& ctx) {
    transit::exchange_options o;
    o.method = transit::exchange_method::direct;
    {
      transit::sparse_exchange<long> x(ctx, o);
      const auto everyone = [&] {
        std::vector<transit::parcel<long>> out;
        for (int p = 0; p < ctx.size(); ++p) out.push_back({p, {long{p}}});
        return out;
      };
      x.run(everyone());
      if (ctx.rank() != 1) {
        x.run(everyone());  // PE 1 never takes part
        return;
      }
    }
    ctx.barrier();  // PE 1 keeps receiving: the others' records arrive for a destroyed exchange
  });
}
